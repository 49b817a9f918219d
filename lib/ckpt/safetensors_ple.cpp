#include "ckpt/safetensors_ple.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "ckpt/detail/safetensors_tables.hpp"
#include "ckpt/row_set_reads.hpp"
#include "ckpt/safetensors.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/parallel.hpp"
#include "io/durable_file.hpp"
#include "io/file_checks.hpp"
#include "io/file_reads.hpp"
#include "io/npy_array.hpp"
#include "io/partial_directory.hpp"
#include "io/pread_file.hpp"

namespace pleshard::detail {

std::string layer_prefix(const std::string& pattern, int decoder_layer) {
  std::string prefix = pattern;
  const auto at = prefix.find("{L}");
  if (at == std::string::npos) throw InputError("layer prefix \"" + pattern + "\" has no {L}");
  return prefix.replace(at, 3, std::to_string(decoder_layer - 1));
}

StDtype block_scale_dtype(RowFormat format) {
  return kernels::block_scaling(format).code == kernels::ScaleCode::e8m0 ? StDtype::F8_E8M0 : StDtype::F8_E4M3;
}

StDtype weight_dtype(RowFormat format) {
  const RowFormatDescriptor& d = describe(format);
  if (const auto dtype = st_dtype_named(d.safetensors_dtype)) return *dtype;
  throw Error("row format " + d.name + ": \"" + d.safetensors_dtype + "\" is no safetensors dtype");
}

void expect_shape(const TensorRef& ref, const std::vector<std::int64_t>& shape) {
  if (ref.tensor->shape != shape) {
    StTensor expected;
    expected.shape = shape;
    throw InputError(ref.where() + ": shape " + ref.tensor->shape_string() + ", expected " + expected.shape_string());
  }
}

namespace {

namespace fs = std::filesystem;

// Every safetensors file of the checkpoint, with the index's promises checked.
std::vector<fs::path> checkpoint_files(const fs::path& path, std::map<std::string, std::string>& index) {
  if (!fs::is_directory(path)) return {path};
  const fs::path index_path = path / k_index_file;
  std::vector<fs::path> files;
  if (fs::exists(index_path)) {
    require_regular_file(index_path, "index");
    std::ifstream in(index_path);
    nlohmann::json document;
    try {
      document = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(index_path.string() + ": not valid JSON: " + e.what());
    }
    if (!document.is_object() || !document.contains("weight_map") || !document["weight_map"].is_object())
      throw InputError(index_path.string() + ": expected an object with a \"weight_map\" object");
    for (const auto& [name, file] : document["weight_map"].items()) {
      if (!file.is_string())
        throw InputError(index_path.string() + ": weight_map entry \"" + name + "\" is not a file name");
      index[name] = file.get<std::string>();
    }
    std::vector<std::string> names;
    for (const auto& [name, file] : index) names.push_back(file);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    for (const auto& name : names) {
      // Only files of the checkpoint's own directory: nothing outside it is opened.
      const fs::path relative(name);
      if (relative.empty() || relative.is_absolute() ||
          std::any_of(relative.begin(), relative.end(), [](const fs::path& part) { return part == ".."; }))
        throw InputError(index_path.string() + ": names file \"" + name + "\", outside the checkpoint directory");
      if (!fs::exists(path / name))
        throw InputError(index_path.string() + ": names file " + name + ", which does not exist");
      require_regular_file(path / name, "shard file");
      files.push_back(path / name);
    }
    return files;
  }
  for (const auto& entry : fs::directory_iterator(path))
    if (entry.path().extension() == ".safetensors") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw InputError(path.string() + ": no .safetensors files and no index");
  return files;
}

class SafetensorsPleCheckpoint final : public PleCheckpoint {
 public:
  SafetensorsPleCheckpoint(const fs::path& path, const ModelConfig& config, const CheckpointOptions& options) {
    path_ = path.string();
    std::map<std::string, std::string> index;
    // The file rows are read through is opened first and described from its descriptor; the
    // header is parsed from the path after, and the path must still name that file.
    for (const auto& file : checkpoint_files(path, index)) {
      auto rows = std::make_unique<PreadFile>(file);
      identities_.emplace_back(*rows);
      files_.push_back(std::make_unique<SafetensorsFile>(file));
      identities_.back().check_same_file();
      preads_[files_.back().get()] = std::move(rows);
    }

    TensorsByName tensors;
    for (const auto& file : files_) {
      for (const auto& t : file->tensors()) {
        const TensorRef ref{file.get(), &t};
        if (auto [it, fresh] = tensors.emplace(t.name, ref); !fresh)
          throw InputError(ref.where() + ": also in " + it->second.file->path());
        if (!index.empty()) {
          const auto listed = index.find(t.name);
          const std::string base = fs::path(file->path()).filename().string();
          if (listed == index.end() || listed->second != base)
            throw InputError(ref.where() + ": not listed for this file in model.safetensors.index.json");
        }
      }
    }
    for (const auto& [name, file] : index)
      if (!tensors.contains(name))
        throw InputError((fs::path(path) / file).string() + ": lacks tensor \"" + name +
                         "\" that model.safetensors.index.json lists");

    const auto specs = derive_table_specs(config);
    for (const auto& spec : specs) {
      LocatedTable located = spec.tensors == TensorLayout::engram_embed
                                 ? locate_engram_table(path_, config, spec, tensors)
                                 : locate_ple_shards(config, spec, options, tensors);
      tables_.push_back(std::move(located.info));
      shards_.push_back(std::move(located.shards));
    }
  }

  [[nodiscard]] CheckpointKind kind() const override { return CheckpointKind::safetensors; }

  void read_rows(int d, std::int64_t begin, std::int64_t end, std::span<std::uint8_t> rows,
                 std::span<std::uint8_t> scales) const override {
    read_range(d, begin, end, rows, scales, PageCache::use);
  }

  [[nodiscard]] TableSource table_source(int d) const override {
    TableSource source = PleCheckpoint::table_source(d);
    source.past_cache = RowsPastCache{
        [this, d](std::int64_t row) {
          const TableShards& shards = shards_.at(static_cast<std::size_t>(d));
          const std::int64_t shard = row / shards.shard_rows;
          const TensorRef& ref = shards.weights.at(static_cast<std::size_t>(shard));
          return ref.file->file_offset(*ref.tensor) +
                 static_cast<std::uint64_t>(row - shard * shards.shard_rows) * table(d).layout.row_bytes();
        },
        [this, d](std::int64_t begin, std::int64_t end, std::span<std::uint8_t> rows, std::span<std::uint8_t> scales) {
          read_range(d, begin, end, rows, scales, PageCache::bypass);
        }};
    return source;
  }

  void read_row_set(int d, std::span<const std::int64_t> sorted_rows, std::span<std::uint8_t> rows,
                    std::span<std::uint8_t> scales) const override {
    const RowSet set{d, sorted_rows, rows, scales};
    read_row_sets({&set, 1}, PageCache::use);
  }

  [[nodiscard]] bool reads_row_sets_on_any_thread() const override { return true; }
  void read_row_sets(std::span<const RowSet> sets, PageCache cache) const override {
    read_row_sets_as_file_reads(
        *this, sets, cache,
        [this](int d, std::span<const RowRun> runs, std::span<std::uint8_t> rows, std::span<std::uint8_t> scales,
               std::vector<FileRead>& reads) { add_reads(d, runs, rows, scales, reads); });
  }

 private:
  // Rows [begin, end) of table d with explicit reads, not the memory map: a file truncated
  // under a running job gives an error naming it (a mapped page past the end would be
  // SIGBUS), and no page of the file counts against the process's memory. Reads of at most
  // 1 MiB, all in flight together (io/file_reads.hpp), through the page cache or past it.
  // These bulk reads (a tier's load, band by band) come from threads of pread: on the H200
  // machine a cold FP8 load into the pinned tier ran at 37% of the files' rate through
  // io_uring's buffered reads against 58% this way.
  void read_range(int d, std::int64_t begin, std::int64_t end, std::span<std::uint8_t> rows,
                  std::span<std::uint8_t> scales, PageCache cache) const {
    const PleTableInfo& info = table(d);
    const auto n = static_cast<std::size_t>(end - begin);
    if (begin < 0 || end > info.layout.rows || begin > end ||
        (!rows.empty() && rows.size() < n * info.layout.row_bytes()) ||
        (!scales.empty() && scales.size() < n * info.layout.scale_bytes()))
      throw InputError(path_ + ": read_rows out of range");
    const RowRun run{begin, end - begin, 0};
    std::vector<FileRead> reads;
    add_reads(d, {&run, 1}, rows, scales, reads);
    read_files(reads, ReadPath::threads, cache);
  }

  // The reads of the runs' rows of table d into `rows` and `scales` (an empty span: none),
  // appended to `reads`.
  void add_reads(int d, std::span<const RowRun> runs, std::span<std::uint8_t> rows, std::span<std::uint8_t> scales,
                 std::vector<FileRead>& reads) const {
    const PleTableInfo& info = table(d);
    const TableShards& shards = shards_.at(static_cast<std::size_t>(d));
    const std::size_t row_bytes = info.layout.row_bytes();
    const std::size_t scale_bytes = info.layout.scale_bytes();
    auto add = [&](const TensorRef& ref, std::int64_t local, std::int64_t count, std::size_t width,
                   std::span<std::uint8_t> out, std::int64_t at) {
      const std::uint64_t offset = ref.file->file_offset(*ref.tensor) + static_cast<std::uint64_t>(local) * width;
      const auto bytes = out.subspan(static_cast<std::size_t>(at) * width, static_cast<std::size_t>(count) * width);
      for (std::size_t done = 0; done < bytes.size(); done += k_read_piece_bytes)
        reads.push_back({preads_.at(ref.file).get(), offset + done,
                         bytes.subspan(done, std::min(k_read_piece_bytes, bytes.size() - done))});
    };
    for (const RowRun& run : runs) {
      for (std::int64_t row = run.first; row < run.first + run.count;) {
        const std::int64_t shard = row / shards.shard_rows;
        const std::int64_t shard_begin = shard * shards.shard_rows;
        const std::int64_t stop = std::min(run.first + run.count, shard_begin + shards.shard_rows);
        const std::int64_t at = run.at + (row - run.first);
        if (!rows.empty())
          add(shards.weights[static_cast<std::size_t>(shard)], row - shard_begin, stop - row, row_bytes, rows, at);
        if (scale_bytes != 0 && !scales.empty())
          add(shards.scales[static_cast<std::size_t>(shard)], row - shard_begin, stop - row, scale_bytes, scales, at);
        row = stop;
      }
    }
  }

  // vLLM's PLE layout: `split_ngram_parts` row shards (or one unsharded table) under the
  // layer's prefix, a global scale and optional hash buffers.
  LocatedTable locate_ple_shards(const ModelConfig& config, const TableSpec& spec, const CheckpointOptions& options,
                                 const TensorsByName& tensors) const {
    const std::string prefix = layer_prefix(options.layer_prefix, spec.decoder_layer) + ".";
    const std::string shard_prefix = "ngram_embedding.shard_";
    const bool nvfp4 = config.quantization == TableQuantization::nvfp4;
    const bool fp8 = config.quantization == TableQuantization::fp8;
    // The block-scaled format the config's codes take where their shards carry `.weight_scale`
    // block scales: NVFP4's always do; E4M3 codes with E8M0 scales are fp8_e8m0, whose
    // tables have no global scale.
    const bool scales_allowed = nvfp4 || fp8;
    const RowFormat blocked = nvfp4 ? RowFormat::nvfp4 : RowFormat::fp8_e8m0;
    const std::int64_t parts = config.split_ngram_parts;

    PleTableInfo info;
    info.ple_index = spec.ple_index;
    info.decoder_layer = spec.decoder_layer;
    info.layout.head_dim = spec.head_dim;
    info.layout.rows = spec.padded_rows;
    TableShards shards;
    shards.shard_rows = spec.shard_rows;
    shards.weights.resize(static_cast<std::size_t>(parts));
    shards.scales.resize(static_cast<std::size_t>(parts));
    std::optional<TensorRef> unsharded;
    std::optional<TensorRef> global;
    bool format_known = false;

    auto take_weight_dtype = [&](const TensorRef& ref) {
      // The first format (in the registry's order: fp8 before fp8_e8m0) whose codes are of
      // this dtype; block scales make E4M3 codes fp8_e8m0 (below).
      const std::vector<RowFormat> formats = known_row_formats();
      const auto named = std::find_if(formats.begin(), formats.end(), [&](RowFormat format) {
        return describe(format).safetensors_dtype == to_string(ref.tensor->dtype);
      });
      if (named == formats.end())
        throw InputError(ref.where() + ": dtype " + to_string(ref.tensor->dtype) + " is not a PLE row format");
      const RowFormat f = *named;
      if (!format_matches_config(f, config.quantization))
        throw InputError(ref.where() + ": dtype " + to_string(ref.tensor->dtype) +
                         " does not match ple_embedding_dtype = " + to_string(config.quantization) +
                         " (packed rows are never cast)");
      if (format_known && f != info.layout.format)
        throw InputError(ref.where() + ": dtype " + to_string(ref.tensor->dtype) + " differs from the other shards' " +
                         to_string(info.layout.format));
      info.layout.format = f;
      format_known = true;
    };
    auto read_buffer = [&](const TensorRef& ref, std::size_t length, std::vector<std::int64_t>& out) {
      if (ref.tensor->dtype != StDtype::I64)
        throw InputError(ref.where() + ": dtype " + to_string(ref.tensor->dtype) + ", expected I64");
      expect_shape(ref, {static_cast<std::int64_t>(length)});
      out.resize(length);
      std::memcpy(out.data(), ref.file->data(*ref.tensor).data(), length * sizeof(std::int64_t));
    };

    for (auto it = tensors.lower_bound(prefix); it != tensors.end() && it->first.starts_with(prefix); ++it) {
      const std::string name = it->first.substr(prefix.size());
      const TensorRef& ref = it->second;
      const std::string leaf = name.substr(name.rfind('.') + 1);
      if (leaf.starts_with("hashstats_") || leaf == "token_lookup") continue;
      if (name == "layer_multipliers") {
        read_buffer(ref, static_cast<std::size_t>(spec.ngram_size), info.multipliers);
      } else if (name == "ngram_heads_vocab_sizes") {
        read_buffer(ref, static_cast<std::size_t>(spec.total_heads()), info.head_sizes);
      } else if (name == "ngram_heads_offsets") {
        read_buffer(ref, static_cast<std::size_t>(spec.total_heads()), info.head_offsets);
      } else if (name == (nvfp4 ? "ngram_embedding.weight_scale_2" : "ngram_embedding.weight_scale") &&
                 (fp8 || nvfp4)) {
        global = ref;
      } else if (name.starts_with(shard_prefix)) {
        const std::string rest = name.substr(shard_prefix.size());
        const auto dot = rest.find('.');
        const std::string number = rest.substr(0, dot);
        const std::string suffix = dot == std::string::npos ? "" : rest.substr(dot + 1);
        if (number.empty() || number.size() > 9 ||
            !std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
            (suffix != "weight" && !(scales_allowed && suffix == "weight_scale"))) {
          log_warning(ref.where() + ": not a PLE shard tensor; ignored");
          continue;
        }
        const std::int64_t shard = std::stoll(number);
        if (shard >= parts)
          throw InputError(ref.where() + ": shard index " + std::to_string(shard) +
                           " >= split_ngram_parts = " + std::to_string(parts));
        const std::int64_t expected_rows =
            std::max<std::int64_t>(0, std::min(spec.shard_rows, spec.padded_rows - shard * spec.shard_rows));
        auto& slot = (suffix == "weight" ? shards.weights : shards.scales)[static_cast<std::size_t>(shard)];
        if (slot.tensor != nullptr)
          throw InputError(ref.where() + ": duplicate of shard " + std::to_string(shard) + " (" + slot.where() + ")");
        if (suffix == "weight") {
          take_weight_dtype(ref);
          expect_shape(ref, {expected_rows,
                             static_cast<std::int64_t>(info.layout.row_bytes() / (dtype_size(ref.tensor->dtype)))});
        } else {
          if (ref.tensor->dtype != block_scale_dtype(blocked))
            throw InputError(ref.where() + ": dtype " + to_string(ref.tensor->dtype) + ", expected " +
                             to_string(block_scale_dtype(blocked)) + " block scales (packed bytes are never cast)");
          if (!kernels::whole_blocks(blocked, spec.head_dim))
            throw InputError(ref.where() + ": head_dim " + std::to_string(spec.head_dim) + " is not a multiple of " +
                             to_string(blocked) + "'s blocks of " +
                             std::to_string(kernels::block_scaling(blocked).block) + " values");
          expect_shape(ref,
                       {expected_rows, static_cast<std::int64_t>(kernels::scale_row_bytes(blocked, spec.head_dim))});
        }
        slot = ref;
      } else if (nvfp4 && (name == "ngram_embedding.weight" || name == "ngram_embedding.weight_scale")) {
        throw InputError(ref.where() + ": NVFP4 tables must be stored as " + shard_prefix +
                         "<i>.weight and .weight_scale shards, not unsharded");
      } else if (name == "ngram_embedding.weight") {
        take_weight_dtype(ref);
        expect_shape(ref, {spec.padded_rows,
                           static_cast<std::int64_t>(info.layout.row_bytes() / dtype_size(ref.tensor->dtype))});
        unsharded = ref;
      } else {
        log_warning(ref.where() + ": unexpected tensor under the PLE prefix; ignored");
      }
    }

    const std::string layer = path_ + ": PLE layer " + std::to_string(spec.ple_index) + " (decoder layer " +
                              std::to_string(spec.decoder_layer) + ", prefix " + prefix + ")";
    if (!format_known) throw InputError(layer + ": no ngram_embedding tensors");
    const bool block_scaled =
        std::any_of(shards.scales.begin(), shards.scales.end(), [](const TensorRef& r) { return r.tensor; });
    if (block_scaled) info.layout.format = blocked;  // E4M3 codes: fp8_e8m0 where shards carry scales
    if (unsharded) {
      if (std::any_of(shards.weights.begin(), shards.weights.end(), [](const TensorRef& r) { return r.tensor; }))
        throw InputError(unsharded->where() + ": both sharded and unsharded tables present");
      if (block_scaled)
        throw InputError(unsharded->where() + ": block scales belong to " + shard_prefix +
                         "<i>.weight shards, not to an unsharded table");
      shards.shard_rows = spec.padded_rows;
      shards.weights = {*unsharded};
    } else {
      for (std::int64_t i = 0; i < parts && i * spec.shard_rows < spec.padded_rows; ++i) {
        const auto s = static_cast<std::size_t>(i);
        if (shards.weights[s].tensor == nullptr)
          throw InputError(layer + ": shard " + std::to_string(i) + " (rows " + std::to_string(i * spec.shard_rows) +
                           "..) is missing: incomplete row coverage");
        if (info.layout.scale_bytes() != 0 && shards.scales[s].tensor == nullptr)
          throw InputError(layer + ": shard " + std::to_string(i) + " has no weight_scale");
      }
    }
    if (global && !kernels::has_global_scale(info.layout.format))
      throw InputError(global->where() + ": a global scale beside " + to_string(info.layout.format) +
                       " block scales, which have none");
    if (kernels::has_global_scale(info.layout.format)) {
      const char* name = nvfp4 ? "ngram_embedding.weight_scale_2" : "ngram_embedding.weight_scale";
      if (!global) throw InputError(layer + ": global scale " + name + " is missing");
      if (global->tensor->dtype != StDtype::F32 || (global->tensor->shape.size() > 1) ||
          (global->tensor->shape.size() == 1 && global->tensor->shape[0] != 1))
        throw InputError(global->where() + ": expected one F32 value, got " + to_string(global->tensor->dtype) + " " +
                         global->tensor->shape_string());
      std::memcpy(&info.global_scale, global->file->data(*global->tensor).data(), sizeof(float));
      if (!std::isfinite(info.global_scale))
        throw InputError(global->where() + ": global scale is " + std::to_string(info.global_scale));
    }
    return {std::move(info), std::move(shards)};
  }

  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<const SafetensorsFile*, std::unique_ptr<PreadFile>> preads_;
  std::vector<TableShards> shards_;
};

}  // namespace

std::unique_ptr<PleCheckpoint> open_safetensors_checkpoint(const std::filesystem::path& path, const ModelConfig& config,
                                                           const CheckpointOptions& options) {
  return std::make_unique<SafetensorsPleCheckpoint>(path, config, options);
}

}  // namespace pleshard::detail

namespace pleshard::detail {

namespace {

// The files of a checkpoint directory as written here or by an earlier version (a killed
// write's .partial files among them): what a new checkpoint written there may replace.
bool is_checkpoint_file(const std::string& name) {
  const auto ends_with = [&](std::string_view tail) {
    return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  const std::string file = ends_with(".partial") ? name.substr(0, name.size() - 8) : name;
  return file == k_index_file || file == "config.json" || file == k_token_map_file ||
         (file.size() > 12 && file.compare(file.size() - 12, 12, ".safetensors") == 0);
}

}  // namespace

void write_safetensors_checkpoint(const std::filesystem::path& path, const ModelConfig& config,
                                  const std::vector<TableSource>& tables, const WriteOptions& options,
                                  const std::function<void(std::uint64_t)>& progress) {
  namespace fs = std::filesystem;
  if (fs::exists(path) && !fs::is_directory(path)) throw InputError(path.string() + ": exists and is not a directory");
  // Written aside and put in place whole (io/partial_directory.hpp): a directory that held an
  // earlier checkpoint then holds this one alone, and a write that fails leaves it as it was.
  PartialDirectory directory(path, is_checkpoint_file);
  const fs::path& into = directory.partial();
  const int files = std::max(1, options.files);

  // Every tensor in write order; shards are dealt to files in contiguous runs. The small
  // tensors (hash buffers, global scales) go after every table's shards, so that the rows
  // start where the data area does (a 4 KiB boundary) and keep their 16-byte alignment:
  // the pinned tier then loads them past the page cache, straight into its rows.
  struct Planned {
    int file;
    StTensorSource source;
  };
  std::vector<Planned> planned;
  std::vector<Planned> trailing;
  const auto specs = derive_table_specs(config);
  for (const auto& table : tables) {
    const PleTableInfo& info = table.info;
    // Engram tables go whole under DeepSeek's names, with no hash buffers (its released
    // checkpoints carry none); PLE tables in vLLM's shards under the layer prefix.
    const bool engram = specs.at(static_cast<std::size_t>(info.ple_index)).tensors == TensorLayout::engram_embed;
    const std::int64_t parts = engram ? 1 : config.split_ngram_parts;
    const std::string prefix = engram ? "" : layer_prefix(options.layer_prefix, info.decoder_layer) + ".";
    const std::size_t row_bytes = info.layout.row_bytes();
    const std::size_t scale_bytes = info.layout.scale_bytes();
    const std::int64_t shard_rows = (info.layout.rows + parts - 1) / parts;
    const auto t = static_cast<std::int64_t>(&table - tables.data());
    const auto file_of = [&](std::int64_t shard) {
      return static_cast<int>((t * parts + shard) * files / (static_cast<std::int64_t>(tables.size()) * parts));
    };
    const auto buffer = [](const std::vector<std::int64_t>& values) {
      return [values](std::uint64_t offset, std::span<std::uint8_t> chunk) {
        std::memcpy(chunk.data(), reinterpret_cast<const std::uint8_t*>(values.data()) + offset, chunk.size());
      };
    };
    if (!engram && !info.multipliers.empty())
      trailing.push_back({file_of(0),
                          {prefix + "layer_multipliers",
                           StDtype::I64,
                           {static_cast<std::int64_t>(info.multipliers.size())},
                           8,
                           buffer(info.multipliers)}});
    if (!engram && !info.head_sizes.empty())
      trailing.push_back({file_of(0),
                          {prefix + "ngram_heads_vocab_sizes",
                           StDtype::I64,
                           {static_cast<std::int64_t>(info.head_sizes.size())},
                           8,
                           buffer(info.head_sizes)}});
    if (!engram && !info.head_offsets.empty())
      trailing.push_back({file_of(0),
                          {prefix + "ngram_heads_offsets",
                           StDtype::I64,
                           {static_cast<std::int64_t>(info.head_offsets.size())},
                           8,
                           buffer(info.head_offsets)}});
    if (kernels::has_global_scale(info.layout.format)) {
      const float scale = info.global_scale;
      trailing.push_back({file_of(0),
                          {prefix + (info.layout.format == RowFormat::nvfp4 ? "ngram_embedding.weight_scale_2"
                                                                            : "ngram_embedding.weight_scale"),
                           StDtype::F32,
                           {},
                           4,
                           [scale](std::uint64_t, std::span<std::uint8_t> chunk) {
                             std::memcpy(chunk.data(), &scale, sizeof scale);
                           }}});
    }
    const StDtype codes_dtype = weight_dtype(info.layout.format);
    // Shards past the last row would be empty: the layout needs none of them.
    for (std::int64_t shard = 0; shard < parts && shard * shard_rows < info.layout.rows; ++shard) {
      const std::int64_t first = shard * shard_rows;
      const std::int64_t rows = std::min(shard_rows, info.layout.rows - first);
      const std::string name =
          engram ? engram_tensor_stem(info.decoder_layer) : prefix + "ngram_embedding.shard_" + std::to_string(shard);
      const RowSource source = table.rows;
      // The codes band makes the scales of the same rows too; the scales tensor, written
      // band by band right after it, takes them from here instead of making them again.
      struct Kept {
        std::int64_t begin = -1;
        std::int64_t count = 0;
        std::vector<std::uint8_t> scales;
      };
      const auto kept = std::make_shared<Kept>();
      const auto codes = [source, first, row_bytes, scale_bytes, kept](std::uint64_t offset,
                                                                       std::span<std::uint8_t> chunk) {
        const auto begin = first + static_cast<std::int64_t>(offset / row_bytes);
        const auto count = static_cast<std::int64_t>(chunk.size() / row_bytes);
        kept->scales.resize(static_cast<std::size_t>(count) * scale_bytes);
        source(begin, begin + count, chunk, kept->scales);
        kept->begin = begin;
        kept->count = count;
      };
      const auto scales = [source, first, row_bytes, scale_bytes, kept](std::uint64_t offset,
                                                                        std::span<std::uint8_t> chunk) {
        const auto begin = first + static_cast<std::int64_t>(offset / scale_bytes);
        const auto count = static_cast<std::int64_t>(chunk.size() / scale_bytes);
        if (kept->begin == begin && kept->count == count) {
          std::memcpy(chunk.data(), kept->scales.data(), chunk.size());
          return;
        }
        std::vector<std::uint8_t> codes_band(static_cast<std::size_t>(count) * row_bytes);
        source(begin, begin + count, codes_band, chunk);
      };
      planned.push_back({file_of(shard),
                         {name + ".weight",
                          codes_dtype,
                          {rows, static_cast<std::int64_t>(row_bytes / dtype_size(codes_dtype))},
                          row_bytes,
                          codes}});
      if (scale_bytes != 0)
        planned.push_back({file_of(shard),
                           {name + (engram ? ".scale" : ".weight_scale"),
                            block_scale_dtype(info.layout.format),
                            {rows, static_cast<std::int64_t>(scale_bytes)},
                            scale_bytes,
                            scales,
                            true}});
    }
  }

  planned.insert(planned.end(), trailing.begin(), trailing.end());

  const auto file_name = [&](int f) {
    if (files == 1) return std::string("model.safetensors");
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", f + 1, files);
    return std::string(name);
  };
  nlohmann::json weight_map = nlohmann::json::object();
  std::uint64_t total_before = 0;
  std::uint64_t total_bytes = 0;
  for (int f = 0; f < files; ++f) {
    std::vector<StTensorSource> sources;
    for (const auto& p : planned)
      if (p.file == f) {
        sources.push_back(p.source);
        weight_map[p.source.name] = file_name(f);
      }
    write_safetensors(into / file_name(f), sources, {{"format", "pt"}, {"producer", "pleshard"}},
                      [&](std::uint64_t bytes) {
                        total_bytes = total_before + bytes;
                        if (progress) progress(total_bytes);
                      });
    total_before = total_bytes;
  }
  if (files > 1) {
    const nlohmann::json index = {{"metadata", {{"total_size", total_bytes}}}, {"weight_map", weight_map}};
    write_text_file(into / k_index_file, index.dump(1) + "\n");
  }
  write_text_file(into / "config.json", to_json(config).dump(1) + "\n");
  // The map the tables are hashed through goes with them.
  if (config.token_map != nullptr) write_npy_integers(into / k_token_map_file, config.token_map->ids());
  directory.commit();
}

}  // namespace pleshard::detail
