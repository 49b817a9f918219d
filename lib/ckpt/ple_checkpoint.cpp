#include "ckpt/ple_checkpoint.hpp"
#include "core/band_pipeline.hpp"

#include <algorithm>
#include <cstring>

#include "ckpt/checkpoint_token_map.hpp"
#include "ckpt/hdf5_ple.hpp"
#include "ckpt/safetensors_ple.hpp"
#include "core/digest.hpp"
#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/option_names.hpp"
#include "core/parallel.hpp"
#include "io/file_checks.hpp"

namespace pleshard {

namespace fs = std::filesystem;

namespace {

constexpr EnumNames<CheckpointKind, 4> k_kinds{{{CheckpointKind::safetensors, "safetensors"},
                                                {CheckpointKind::hdf5, "hdf5"},
                                                {CheckpointKind::synthetic, "synthetic"},
                                                {CheckpointKind::hdf5, "h5"}}};

}  // namespace

CheckpointKind parse_checkpoint_kind(std::string_view name) { return parse_value(k_kinds, name, "--kind"); }

const char* to_string(CheckpointKind kind) { return name_of(k_kinds, kind); }

namespace {

bool is_hdf5_path(const fs::path& path) {
  const auto ext = path.extension();
  return ext == ".h5" || ext == ".hdf5";
}

// A directory holding exactly one .h5 file stands for that file.
fs::path single_hdf5_in(const fs::path& dir) {
  fs::path found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!is_hdf5_path(entry.path())) continue;
    if (!found.empty()) throw InputError(dir.string() + ": more than one .h5 file; name one");
    found = entry.path();
  }
  return found;
}

}  // namespace

fs::path hdf5_checkpoint_file(const fs::path& checkpoint) {
  if (is_hdf5_path(checkpoint)) return checkpoint;
  return fs::is_directory(checkpoint) ? single_hdf5_in(checkpoint) : fs::path();
}

namespace {

std::unique_ptr<PleCheckpoint> open_checkpoint(const fs::path& path, const ModelConfig& config,
                                               const CheckpointOptions& options) {
  if (!fs::exists(path)) throw InputError(path.string() + ": checkpoint not found");
  if (!fs::is_directory(path)) require_regular_file(path, "checkpoint");
  if (fs::is_directory(path)) {
    if (const fs::path h5 = single_hdf5_in(path); !h5.empty()) return detail::open_hdf5_checkpoint(h5, config, options);
    return detail::open_safetensors_checkpoint(path, config, options);
  }
  if (is_hdf5_path(path)) return detail::open_hdf5_checkpoint(path, config, options);
  if (path.extension() == ".safetensors") return detail::open_safetensors_checkpoint(path, config, options);
  throw InputError(path.string() + ": expected a directory, a .safetensors or an .h5 file");
}

}  // namespace

std::unique_ptr<PleCheckpoint> open_ple_checkpoint(const fs::path& path, const ModelConfig& config,
                                                   const CheckpointOptions& options) {
  auto checkpoint = open_checkpoint(path, config, options);
  if (const auto carried = carried_token_map(config, path)) checkpoint->set_carried_token_map(carried->sha256());
  // The hash buffers as a job would use them, checked now: every head inside the table.
  for (const TableSpec& spec : derive_table_specs(config))
    (void)hashing_spec(spec, checkpoint->table(spec.ple_index), checkpoint->path(), false);
  return checkpoint;
}

ModelConfig load_checkpoint_config(const fs::path& checkpoint, const fs::path& config_path, const fs::path& token_map) {
  const fs::path dir = fs::is_directory(checkpoint) ? checkpoint : checkpoint.parent_path();
  ModelConfig config;
  if (!config_path.empty()) {
    config = read_model_config(config_path);
  } else if (fs::exists(dir / "config.json")) {
    config = read_model_config(dir / "config.json");
  } else {
    const fs::path h5 = fs::exists(checkpoint) ? hdf5_checkpoint_file(checkpoint) : fs::path();
    if (h5.empty() || !fs::exists(h5))
      throw InputError(checkpoint.string() + ": no " + option_name(Option::config) +
                       " given and no config.json beside the checkpoint");
    config = detail::read_hdf5_config(h5);
  }
  take_checkpoint_token_map(config, checkpoint, token_map);
  return config;
}

TableSpec hashing_spec(const TableSpec& derived, const PleTableInfo& table, const std::string& source,
                       bool log_differences) {
  TableSpec spec = derived;
  const auto take = [&](const char* name, const std::vector<std::int64_t>& loaded, std::vector<std::int64_t>& target) {
    if (loaded.empty() || loaded == target) return;
    if (log_differences)
      log_warning(source + ": PLE layer " + std::to_string(derived.ple_index) + ": checkpoint " + name +
                  " differ from the derived ones; using the checkpoint's");
    target = loaded;
  };
  take("layer_multipliers", table.multipliers, spec.multipliers);
  take("ngram_heads_vocab_sizes", table.head_sizes, spec.head_sizes);
  take("ngram_heads_offsets", table.head_offsets, spec.head_offsets);
  for (std::size_t h = 0; h < spec.head_sizes.size(); ++h) {
    // offset + size <= rows, written so that it cannot overflow
    if (spec.head_sizes[h] <= 0 || spec.head_offsets[h] < 0 || spec.head_offsets[h] > spec.padded_rows ||
        spec.head_sizes[h] > spec.padded_rows - spec.head_offsets[h])
      throw InputError(source + ": PLE layer " + std::to_string(derived.ple_index) + ": head " + std::to_string(h) +
                       " (offset " + std::to_string(spec.head_offsets[h]) + ", size " +
                       std::to_string(spec.head_sizes[h]) + ") lies outside the " + std::to_string(spec.padded_rows) +
                       " table rows");
  }
  return spec;
}

std::vector<RowRun> row_runs(std::span<const std::int64_t> sorted_rows) {
  std::vector<RowRun> runs;
  for (std::size_t i = 0; i < sorted_rows.size(); ++i) {
    if (!runs.empty() && runs.back().first + runs.back().count == sorted_rows[i]) {
      ++runs.back().count;
    } else {
      runs.push_back({sorted_rows[i], 1, static_cast<std::int64_t>(i)});
    }
  }
  return runs;
}

void PleCheckpoint::read_row_set(int ple_index, std::span<const std::int64_t> sorted_rows, std::span<std::uint8_t> rows,
                                 std::span<std::uint8_t> scales) const {
  if (reads_collectively())
    throw SystemError(path_ + ": opened for collective reads; the disk tier reads each rank's rows alone");
  const TableLayout& layout = table(ple_index).layout;
  const std::size_t row_bytes = layout.row_bytes();
  const std::size_t scale_bytes = layout.scale_bytes();
  const bool with_scales = !scales.empty();
  if (rows.size() < sorted_rows.size() * row_bytes || (with_scales && scales.size() < sorted_rows.size() * scale_bytes))
    throw SystemError(path_ + ": read_row_set output too small");
  for (const RowRun& run : row_runs(sorted_rows)) {
    const auto at = static_cast<std::size_t>(run.at);
    const auto n = static_cast<std::size_t>(run.count);
    read_rows(ple_index, run.first, run.first + run.count, rows.subspan(at * row_bytes, n * row_bytes),
              with_scales ? scales.subspan(at * scale_bytes, n * scale_bytes) : std::span<std::uint8_t>());
  }
}

TableSource PleCheckpoint::table_source(int ple_index) const {
  TableSource source{table(ple_index), [this, ple_index](std::int64_t begin, std::int64_t end,
                                                         std::span<std::uint8_t> rows, std::span<std::uint8_t> scales) {
                       read_rows(ple_index, begin, end, rows, scales);
                     }};
  source.reads_hdf5 = kind() == CheckpointKind::hdf5;
  return source;
}

std::uint64_t PleCheckpoint::content_identity() const {
  Digest digest;
  digest.add(std::string_view(to_string(kind())));
  for (const PleTableInfo& t : tables_) {
    digest.add(static_cast<std::uint64_t>(t.ple_index)).add(static_cast<std::uint64_t>(t.decoder_layer));
    digest.add(std::string_view(to_string(t.layout.format)));
    digest.add(static_cast<std::uint64_t>(t.layout.head_dim)).add(static_cast<std::uint64_t>(t.layout.rows));
    std::uint32_t scale_bits = 0;
    std::memcpy(&scale_bits, &t.global_scale, sizeof scale_bits);
    digest.add(std::uint64_t{scale_bits});
    for (const auto* buffer : {&t.multipliers, &t.head_sizes, &t.head_offsets})
      digest.add({reinterpret_cast<const std::uint8_t*>(buffer->data()), buffer->size() * sizeof(std::int64_t)});
  }
  digest.add(std::string_view(carried_token_map_));
  for (const FileIdentity& file : identities_) digest.add(file.sampled_content());
  return digest.value();
}

std::uint64_t PleCheckpoint::file_state() const {
  Digest digest(identities_.size());
  for (const FileIdentity& file : identities_) digest.add(file.state());
  return digest.value();
}

namespace {

// scan_rows of a band, its rows split over the host's threads.
RowAnomalies scan_band(const TableLayout& layout, std::int64_t begin, std::int64_t end,
                       std::span<const std::uint8_t> rows, std::span<const std::uint8_t> scales) {
  constexpr std::int64_t k_piece_rows = 16384;
  const auto pieces = static_cast<std::size_t>((end - begin + k_piece_rows - 1) / k_piece_rows);
  std::vector<RowAnomalies> found(pieces);
  parallel_for(pieces, host_threads(), 1, [&](std::size_t p) {
    const std::int64_t first = begin + static_cast<std::int64_t>(p) * k_piece_rows;
    const std::int64_t count = std::min(k_piece_rows, end - first);
    const auto at = static_cast<std::size_t>(first - begin);
    found[p] = scan_rows(layout, first, count,
                         rows.subspan(at * layout.row_bytes(), static_cast<std::size_t>(count) * layout.row_bytes()),
                         scales.empty() ? scales
                                        : scales.subspan(at * layout.scale_bytes(),
                                                         static_cast<std::size_t>(count) * layout.scale_bytes()));
  });
  RowAnomalies total;
  for (const RowAnomalies& f : found) total += f;
  return total;
}

}  // namespace

std::vector<RowAnomalies> PleCheckpoint::verify_data(const std::function<void(double)>& progress) const {
  std::uint64_t total = 0;
  for (const auto& t : tables_) total += static_cast<std::uint64_t>(t.layout.rows) * t.layout.bytes_per_row();
  std::uint64_t done = 0;
  std::vector<std::uint8_t> rows;
  std::vector<std::uint8_t> scales;
  std::vector<RowAnomalies> found(tables_.size());
  for (const auto& t : tables_) {
    const auto band = static_cast<std::int64_t>(items_per_band(t.layout.bytes_per_row()));
    for (std::int64_t begin = 0; begin < t.layout.rows; begin += band) {
      const std::int64_t end = std::min(t.layout.rows, begin + band);
      rows.resize(static_cast<std::size_t>(end - begin) * t.layout.row_bytes());
      scales.resize(static_cast<std::size_t>(end - begin) * t.layout.scale_bytes());
      read_rows(t.ple_index, begin, end, rows, scales);
      found[static_cast<std::size_t>(&t - tables_.data())] += scan_band(t.layout, begin, end, rows, scales);
      done += static_cast<std::uint64_t>(end - begin) * t.layout.bytes_per_row();
      if (progress) progress(total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total));
    }
  }
  return found;
}

std::vector<RowAnomalies> PleCheckpoint::sample_anomalies(std::int64_t rows_per_table) const {
  std::vector<RowAnomalies> found;
  std::vector<std::int64_t> sample;
  std::vector<std::uint8_t> rows;
  std::vector<std::uint8_t> scales;
  for (const auto& t : tables_) {
    // Evenly spaced rows, the first and last among them (i * rows stays far below 2^63).
    const std::int64_t n = std::min(t.layout.rows, rows_per_table);
    sample.clear();
    for (std::int64_t i = 0; i < n; ++i) sample.push_back(n == 1 ? 0 : i * (t.layout.rows - 1) / (n - 1));
    sample.erase(std::unique(sample.begin(), sample.end()), sample.end());
    rows.resize(sample.size() * t.layout.row_bytes());
    scales.resize(sample.size() * t.layout.scale_bytes());
    read_row_set(t.ple_index, sample, rows, scales);
    RowAnomalies& table = found.emplace_back();
    for (std::size_t i = 0; i < sample.size(); ++i)
      table +=
          scan_rows(t.layout, sample[i], 1, std::span(rows).subspan(i * t.layout.row_bytes(), t.layout.row_bytes()),
                    std::span(scales).subspan(i * t.layout.scale_bytes(), t.layout.scale_bytes()));
  }
  return found;
}

void write_checkpoint(const fs::path& path, const ModelConfig& config, const std::vector<TableSource>& tables,
                      const WriteOptions& options, const std::function<void(std::uint64_t)>& progress) {
  // What the readers could not give back: blocks split across rows, a global scale where
  // the format stores none.
  for (const auto& table : tables) {
    const PleTableInfo& info = table.info;
    const std::string where =
        path.string() + ": table " + std::to_string(info.ple_index) + " (" + to_string(info.layout.format) + ")";
    if (!info.layout.whole_blocks())
      throw InputError(where + ": head_dim " + std::to_string(info.layout.head_dim) +
                       " is not a multiple of the format's blocks of " +
                       std::to_string(kernels::block_scaling(info.layout.format).block) + " values");
    if (!kernels::has_global_scale(info.layout.format) && info.global_scale != 1.0f)
      throw InputError(where + ": global scale " + std::to_string(info.global_scale) +
                       ", but the format stores none (1)");
  }
  if (options.kind == CheckpointKind::hdf5) {
    detail::write_hdf5_checkpoint(path, config, tables, progress);
  } else {
    detail::write_safetensors_checkpoint(path, config, tables, options, progress);
  }
}

}  // namespace pleshard
