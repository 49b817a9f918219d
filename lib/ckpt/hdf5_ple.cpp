#include "ckpt/hdf5_ple.hpp"

#include "ckpt/hdf5_rows.hpp"
#include "ckpt/hdf5_stored_chunks.hpp"
#include "ckpt/row_set_reads.hpp"
#include "io/detail/h5_handle.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/band_pipeline.hpp"
#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/watched_collectives.hpp"
#include "io/durable_file.hpp"
#include "io/file_checks.hpp"
#include "kernels/common/ngram_hash.hpp"

namespace pleshard::detail {

namespace {

namespace fs = std::filesystem;

using detail::H5Id;
using detail::quiet_hdf5;
using detail::read_int_attribute;
using detail::read_string_attribute;
using detail::write_int_attribute;
using detail::write_string_attribute;

H5Id check(hid_t id, herr_t (*close)(hid_t), const std::string& what) { return detail::h5_check(id, close, what); }
void check(herr_t status, const std::string& what) { detail::h5_check(status, what); }

bool is_hdf5_file(const std::string& path) {
#if H5_VERSION_GE(1, 12, 0)
  return H5Fis_accessible(path.c_str(), H5P_DEFAULT) > 0;
#else
  return H5Fis_hdf5(path.c_str()) > 0;
#endif
}

std::string group_name(int d) { return "/ple/" + std::to_string(d); }

// A digest of what hashing and decoding a table depend on beyond its rows: format, head_dim,
// global scale and hash buffers. Written beside them; a reader that finds it recomputes it.
std::int64_t table_fingerprint(const PleTableInfo& info) {
  std::uint64_t h = kernels::splitmix64(0x706c6573ull);  // "ples"
  const auto mix = [&h](std::uint64_t v) { h = kernels::splitmix64(h ^ v); };
  for (const char c : std::string(to_string(info.layout.format))) mix(static_cast<unsigned char>(c));
  mix(static_cast<std::uint64_t>(info.layout.head_dim));
  std::uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &info.global_scale, sizeof scale_bits);
  mix(scale_bits);
  for (const auto* buffer : {&info.multipliers, &info.head_sizes, &info.head_offsets}) {
    mix(buffer->size());
    for (const std::int64_t v : *buffer) mix(static_cast<std::uint64_t>(v));
  }
  return static_cast<std::int64_t>(h);
}

// Files whose object headers carry checksums (the 1.8 format and later), so that every
// attribute a result depends on is checked when it is read.
H5Id checksummed_fapl() {
  H5Id fapl = check(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate");
  check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST), "H5Pset_libver_bounds");
  return fapl;
}

// A small dataset a table's results depend on, checksummed (Fletcher32) like the rows.
void write_vector(hid_t group, const char* name, hid_t file_type, hid_t memory_type, const void* data, hsize_t count) {
  H5Id space = check(H5Screate_simple(1, &count, nullptr), H5Sclose, "H5Screate_simple");
  H5Id plist = check(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "H5Pcreate");
  check(H5Pset_obj_track_times(plist.get(), 0), "H5Pset_obj_track_times");
  check(H5Pset_chunk(plist.get(), 1, &count), "H5Pset_chunk");
  check(H5Pset_fletcher32(plist.get()), "H5Pset_fletcher32");
  H5Id set = check(H5Dcreate2(group, name, file_type, space.get(), H5P_DEFAULT, plist.get(), H5P_DEFAULT), H5Dclose,
                   std::string("cannot create dataset ") + name);
  check(H5Dwrite(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
        std::string("cannot write dataset ") + name);
}

std::vector<hsize_t> dims_of(hid_t set) {
  H5Id space(H5Dget_space(set), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return dims;
}

// Rows per chunk: about 1 MiB of rows, so a rank's range touches few foreign chunks.
hsize_t chunk_rows(std::size_t row_bytes, std::int64_t rows) {
  const auto band = std::max<std::size_t>(1, (std::size_t{1} << 20) / std::max<std::size_t>(1, row_bytes));
  return static_cast<hsize_t>(std::max<std::int64_t>(1, std::min<std::int64_t>(rows, static_cast<std::int64_t>(band))));
}

// A table's rows: `rows` x `width` bytes in chunks of `chunk` rows, each with its Fletcher32.
H5Id create_rows_dataset(hid_t group, const char* name, std::int64_t rows, std::size_t width, hsize_t chunk) {
  const hsize_t dims[2] = {static_cast<hsize_t>(rows), static_cast<hsize_t>(width)};
  H5Id space = check(H5Screate_simple(2, dims, nullptr), H5Sclose, "H5Screate_simple");
  H5Id plist = check(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "H5Pcreate");
  check(H5Pset_obj_track_times(plist.get(), 0), "H5Pset_obj_track_times");  // reproducible bytes
  if (rows > 0 && width > 0) {
    const hsize_t chunk_dims[2] = {chunk, static_cast<hsize_t>(width)};
    check(H5Pset_chunk(plist.get(), 2, chunk_dims), "H5Pset_chunk");
    check(H5Pset_fletcher32(plist.get()), "H5Pset_fletcher32");
  }
  return check(H5Dcreate2(group, name, H5T_STD_U8LE, space.get(), H5P_DEFAULT, plist.get(), H5P_DEFAULT), H5Dclose,
               std::string("cannot create dataset ") + name);
}

class Hdf5PleCheckpoint final : public PleCheckpoint {
 public:
  Hdf5PleCheckpoint(const fs::path& path, const ModelConfig& config, const CheckpointOptions& options) {
    quiet_hdf5();
    path_ = path.string();
    read_band_bytes_ = options.read_band_bytes;
    H5Id fapl = check(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate");
    xfer_ = check(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "H5Pcreate");
#if PLESHARD_HDF5_PARALLEL
    int ranks = 1;
    MPI_Comm_size(options.comm, &ranks);
    if (ranks > 1) {
      check(H5Pset_fapl_mpio(fapl.get(), options.comm, MPI_INFO_NULL), "H5Pset_fapl_mpio");
      check(H5Pset_dxpl_mpio(xfer_.get(), options.collective_io ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT),
            "H5Pset_dxpl_mpio");
      collective_ = options.collective_io;
      shared_ = true;
      comm_ = options.comm;
    }
#else
    (void)options;
#endif
    require_regular_file(path_, "checkpoint");
    if (!is_hdf5_file(path_)) throw InputError(path_ + ": not an HDF5 file");
    // The file located reads go through is opened first and described from its descriptor;
    // the library opens the path after, which must still name that file. An open through
    // MPI-IO waits for every rank, blocking, and so does a collective close: every rank is
    // known to be here first, and to have opened the same file, or all fail together.
    const auto agreed = [this](auto&& body) {
      if (shared_) {
        collective_try(comm_, body);
      } else {
        body();
      }
    };
    agreed([this] {
      pread_ = std::make_unique<PreadFile>(path_);
      identities_.emplace_back(*pread_);
    });
    file_ = check(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose, path_ + ": cannot open HDF5 file");
    agreed([this] { identities_.back().check_same_file(); });

    for (const auto& spec : derive_table_specs(config)) {
      const std::string where = path_ + ": " + group_name(spec.ple_index);
      if (H5Lexists(file_.get(), "/ple", H5P_DEFAULT) <= 0 ||
          H5Lexists(file_.get(), group_name(spec.ple_index).c_str(), H5P_DEFAULT) <= 0)
        throw InputError(where + ": group is missing");
      H5Id group = check(H5Gopen2(file_.get(), group_name(spec.ple_index).c_str(), H5P_DEFAULT), H5Gclose,
                         where + ": cannot open group");
      PleTableInfo info;
      info.ple_index = spec.ple_index;
      info.decoder_layer = spec.decoder_layer;
      try {
        info.layout.format = parse_row_format(read_string_attribute(group.get(), "format", where));
      } catch (const InputError& e) {
        throw InputError(where + ": " + e.what());
      }
      if (!format_matches_config(info.layout.format, config.quantization))
        throw InputError(where + ": format " + to_string(info.layout.format) +
                         " does not match ple_embedding_dtype = " + to_string(config.quantization));
      const std::int64_t head_dim = read_int_attribute(group.get(), "head_dim", where);
      if (head_dim != spec.head_dim)
        throw InputError(where + ": head_dim " + std::to_string(head_dim) + ", the config gives " +
                         std::to_string(spec.head_dim));
      info.layout.head_dim = spec.head_dim;
      info.layout.rows = spec.padded_rows;
      if (!info.layout.whole_blocks())
        throw InputError(where + ": head_dim " + std::to_string(head_dim) + " is not a multiple of " +
                         to_string(info.layout.format) + "'s blocks of " +
                         std::to_string(kernels::block_scaling(info.layout.format).block) + " values");

      Table table;
      table.weight = open_rows(group.get(), "weight", info.layout.rows, info.layout.row_bytes(), where);
      table.weight_rows = Hdf5Rows::locate(file_.get(), table.weight.get(), info.layout.rows, info.layout.row_bytes());
      if (info.layout.scale_bytes() != 0) {
        table.scales = open_rows(group.get(), "weight_scale", info.layout.rows, info.layout.scale_bytes(), where);
        table.scale_rows =
            Hdf5Rows::locate(file_.get(), table.scales.get(), info.layout.rows, info.layout.scale_bytes());
      }
      if (kernels::has_global_scale(info.layout.format)) {
        if (H5Lexists(group.get(), "global_scale", H5P_DEFAULT) <= 0)
          throw InputError(where + "/global_scale: missing");
        H5Id set = check(H5Dopen2(group.get(), "global_scale", H5P_DEFAULT), H5Dclose, where + "/global_scale");
        H5Id type(H5Dget_type(set.get()), H5Tclose);
        H5Id space(H5Dget_space(set.get()), H5Sclose);
        if (H5Tget_class(type.get()) != H5T_FLOAT || !detail::holds_one_element(space.get()))
          throw InputError(where + "/global_scale: expected one float");
        check(H5Dread(set.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &info.global_scale),
              where + "/global_scale: cannot read");
        if (!std::isfinite(info.global_scale))
          throw InputError(where + "/global_scale: is " + std::to_string(info.global_scale));
      }
      read_buffer(group.get(), "layer_multipliers", spec.multipliers.size(), info.multipliers, where);
      read_buffer(group.get(), "ngram_heads_vocab_sizes", spec.head_sizes.size(), info.head_sizes, where);
      read_buffer(group.get(), "ngram_heads_offsets", spec.head_offsets.size(), info.head_offsets, where);
      if (H5Aexists(group.get(), "fingerprint") > 0 &&
          read_int_attribute(group.get(), "fingerprint", where) != table_fingerprint(info))
        throw InputError(where + ": format, head_dim, global_scale or hash buffers do not match their fingerprint");
      tables_.push_back(std::move(info));
      sets_.push_back(std::move(table));
    }
  }

  // A file opened through MPI-IO closes collectively: a rank unwinding alone from a failure
  // would wait there for ranks that are not coming; it leaves the handles open instead (its
  // process is ending, and the others are ended with it).
  ~Hdf5PleCheckpoint() override {
    if (!shared_) return;
    if (std::uncaught_exceptions() == 0) {
      // The close waits for every rank, blocking: every rank is known to be here first.
      watched_barrier(comm_, path_ + ": every rank's collective close");
      return;
    }
    for (Table& t : sets_) {
      t.weight.abandon();
      t.scales.abandon();
    }
    xfer_.abandon();
    file_.abandon();
  }
  Hdf5PleCheckpoint(const Hdf5PleCheckpoint&) = delete;
  Hdf5PleCheckpoint& operator=(const Hdf5PleCheckpoint&) = delete;

  [[nodiscard]] CheckpointKind kind() const override { return CheckpointKind::hdf5; }
  [[nodiscard]] bool reads_collectively() const override { return collective_; }

  [[nodiscard]] TableSource table_source(int d) const override {
    TableSource source = PleCheckpoint::table_source(d);
    const Table& table = sets_.at(static_cast<std::size_t>(d));
    if (table.weight_rows) source.chunk_rows = table.weight_rows->chunk_rows();
    return source;
  }

  // Where every table's codes and block scales were located past HDF5 (and each rank reads
  // alone): a step's rows are plain reads of the file, from any thread.
  [[nodiscard]] bool reads_row_sets_on_any_thread() const override {
    return !collective_ && std::all_of(sets_.begin(), sets_.end(), [](const Table& t) {
      return t.weight_rows.has_value() && (!t.scales.valid() || t.scale_rows.has_value());
    });
  }
  void read_row_sets(std::span<const RowSet> sets, PageCache cache) const override {
    if (!reads_row_sets_on_any_thread()) {
      PleCheckpoint::read_row_sets(sets, cache);
      return;
    }
    read_row_sets_as_file_reads(
        *this, sets, cache,
        [this](int d, std::span<const RowRun> runs, std::span<std::uint8_t> rows, std::span<std::uint8_t> scales,
               std::vector<FileRead>& reads) { add_reads(d, runs, rows, scales, reads); });
  }

  void read_rows(int d, std::int64_t begin, std::int64_t end, std::span<std::uint8_t> rows,
                 std::span<std::uint8_t> scales) const override {
    const PleTableInfo& info = table(d);
    const Table& table = sets_.at(static_cast<std::size_t>(d));
    const std::string where = path_ + ": " + group_name(d);
    if (begin < 0 || end > info.layout.rows || begin > end)
      throw InputError(where + ": rows [" + std::to_string(begin) + ", " + std::to_string(end) + ") out of range");
    // Collective reads: bands of the same count on every rank (the most any rank needs;
    // empty selections past a rank's end), so each H5Dread stays far below 2 GiB per rank.
    // Spans left empty for rows that exist are not wanted; a rank with no rows still takes
    // part in every collective read.
    const bool codes = !rows.empty() || begin == end;
    const bool with_scales = table.scales.valid() && (!scales.empty() || begin == end);
    if (!collective_ && (!codes || table.weight_rows) && (!with_scales || table.scale_rows)) {
      // Past HDF5: codes and scales read together.
      std::vector<Hdf5RowsRead> reads;
      if (codes) reads.push_back({&*table.weight_rows, begin, end, rows.data(), where + "/weight"});
      if (with_scales) reads.push_back({&*table.scale_rows, begin, end, scales.data(), where + "/weight_scale"});
      Hdf5Rows::read(*pread_, reads);
      return;
    }
    std::int64_t band = end - begin;
    std::int64_t bands = 1;
    if (collective_) {
      band = static_cast<std::int64_t>(items_per_band(info.layout.bytes_per_row(), read_band_bytes_));
      bands = (end - begin + band - 1) / band;
      watched_allreduce(&bands, 1, MPI_INT64_T, MPI_MAX, comm_, where + ": every rank's collective read");
    }
    for (std::int64_t k = 0; k < std::max<std::int64_t>(1, bands); ++k) {
      const std::int64_t first = std::min(end, begin + k * band);
      const std::int64_t last = std::min(end, first + band);
      const auto at = static_cast<std::size_t>(first - begin);
      std::string failure;
      try {
        if (codes)
          read_band(table.weight.get(), first, last, info.layout.row_bytes(),
                    rows.data() + at * info.layout.row_bytes(), where + "/weight");
        if (with_scales)
          read_band(table.scales.get(), first, last, info.layout.scale_bytes(),
                    scales.data() + at * info.layout.scale_bytes(), where + "/weight_scale");
      } catch (const std::exception& e) {
        failure = e.what();
      }
      // A band that failed on one rank ends the read on all, before the next collective.
      int failed = failure.empty() ? 0 : 1;
      // Each band's reads (collective: blocking until every rank's) follow a watched agreement.
      if (collective_) watched_allreduce(&failed, 1, MPI_INT, MPI_MAX, comm_, where + ": every rank's collective read");
      if (failed != 0) throw InputError(!failure.empty() ? failure : where + ": another rank could not read its rows");
    }
  }

 private:
  struct Table {
    H5Id weight;
    H5Id scales;
    std::optional<Hdf5Rows> weight_rows;  // where they can be read past HDF5
    std::optional<Hdf5Rows> scale_rows;
  };

  static H5Id open_rows(hid_t group, const char* name, std::int64_t rows, std::size_t width, const std::string& where) {
    if (H5Lexists(group, name, H5P_DEFAULT) <= 0) throw InputError(where + "/" + name + ": missing");
    H5Id set = check(H5Dopen2(group, name, H5P_DEFAULT), H5Dclose, where + "/" + name + ": cannot open");
    const auto dims = dims_of(set.get());
    if (dims.size() != 2 || dims[0] != static_cast<hsize_t>(rows) || dims[1] != width)
      throw InputError(where + "/" + name + ": shape does not match [" + std::to_string(rows) + ", " +
                       std::to_string(width) + "]");
    H5Id type(H5Dget_type(set.get()), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_INTEGER || H5Tget_size(type.get()) != 1)
      throw InputError(where + "/" + name + ": expected u8 row bytes");
    return set;
  }

  static void read_buffer(hid_t group, const char* name, std::size_t length, std::vector<std::int64_t>& out,
                          const std::string& where) {
    if (H5Lexists(group, name, H5P_DEFAULT) <= 0) return;  // optional
    H5Id set = check(H5Dopen2(group, name, H5P_DEFAULT), H5Dclose, where + "/" + name);
    const auto dims = dims_of(set.get());
    H5Id type(H5Dget_type(set.get()), H5Tclose);
    if (dims.size() != 1 || dims[0] != length || H5Tget_class(type.get()) != H5T_INTEGER)
      throw InputError(where + "/" + name + ": expected " + std::to_string(length) + " integers");
    out.resize(length);
    check(H5Dread(set.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()),
          where + "/" + name + ": cannot read");
  }

  // The reads of the runs' rows of table d into `rows` and `scales` (an empty span: none),
  // appended to `reads`, where its located datasets hold them (reads_row_sets_on_any_thread).
  void add_reads(int d, std::span<const RowRun> runs, std::span<std::uint8_t> rows, std::span<std::uint8_t> scales,
                 std::vector<FileRead>& reads) const {
    const Table& t = sets_.at(static_cast<std::size_t>(d));
    const std::size_t row_bytes = table(d).layout.row_bytes();
    const std::size_t scale_bytes = table(d).layout.scale_bytes();
    for (const RowRun& run : runs) {
      const auto at = static_cast<std::size_t>(run.at);
      const auto n = static_cast<std::size_t>(run.count);
      if (!rows.empty())
        t.weight_rows->add_reads(*pread_, run.first, run.count, rows.subspan(at * row_bytes, n * row_bytes), reads);
      if (!scales.empty() && scale_bytes != 0)
        t.scale_rows->add_reads(*pread_, run.first, run.count, scales.subspan(at * scale_bytes, n * scale_bytes),
                                reads);
    }
  }

  void read_band(hid_t set, std::int64_t begin, std::int64_t end, std::size_t width, std::uint8_t* out,
                 const std::string& where) const {
    // Every rank takes part in a collective read, also with an empty selection.
    H5Id file_space(H5Dget_space(set), H5Sclose);
    const hsize_t start[2] = {static_cast<hsize_t>(begin), 0};
    const hsize_t count[2] = {static_cast<hsize_t>(end - begin), static_cast<hsize_t>(width)};
    H5Id memory_space = check(H5Screate_simple(2, count, nullptr), H5Sclose, "H5Screate_simple");
    if (end > begin && width > 0) {
      check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr), "hyperslab");
    } else {
      H5Sselect_none(file_space.get());
      H5Sselect_none(memory_space.get());
    }
    // In the dataset's own type: its bytes as stored, whatever integer type of one byte it
    // is (H5T_NATIVE_UINT8 would clip a signed one's negative bytes to 0).
    H5Id type(H5Dget_type(set), H5Tclose);
    check(H5Dread(set, type.get(), memory_space.get(), file_space.get(), xfer_.get(), out),
          where + ": cannot read rows [" + std::to_string(begin) + ", " + std::to_string(end) +
              ") (corrupted data: checksum mismatch, or a truncated file)");
  }

  H5Id file_;
  std::unique_ptr<PreadFile> pread_;  // the same file, for reads past HDF5
  H5Id xfer_;
  bool collective_ = false;
  bool shared_ = false;  // opened through MPI-IO by several ranks
  MPI_Comm comm_ = MPI_COMM_SELF;
  std::size_t read_band_bytes_ = 0;
  std::vector<Table> sets_;
};

}  // namespace

std::unique_ptr<PleCheckpoint> open_hdf5_checkpoint(const fs::path& path, const ModelConfig& config,
                                                    const CheckpointOptions& options) {
  return std::make_unique<Hdf5PleCheckpoint>(path, config, options);
}

ModelConfig read_hdf5_config(const fs::path& path) {
  quiet_hdf5();
  const std::string p = path.string();
  require_regular_file(p, "checkpoint");
  if (!is_hdf5_file(p)) throw InputError(p + ": not an HDF5 file");
  H5Id file = check(H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, p + ": cannot open HDF5 file");
  const std::string text = read_string_attribute(file.get(), "config", p);
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(p + ": attribute config is not valid JSON: " + e.what());
  }
  return parse_model_config(document, p + " (config attribute)");
}

std::optional<std::vector<std::int64_t>> read_hdf5_token_map(const fs::path& path) {
  quiet_hdf5();
  const std::string p = path.string();
  require_regular_file(p, "checkpoint");
  if (!is_hdf5_file(p)) throw InputError(p + ": not an HDF5 file");
  H5Id file = check(H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, p + ": cannot open HDF5 file");
  if (H5Lexists(file.get(), k_token_map_dataset, H5P_DEFAULT) <= 0) return std::nullopt;
  return detail::read_int64s(file.get(), k_token_map_dataset, p);
}

void write_hdf5_checkpoint(const fs::path& path, const ModelConfig& config, const std::vector<TableSource>& tables,
                           const std::function<void(std::uint64_t)>& progress) {
  quiet_hdf5();
  const fs::path partial = path.string() + ".partial";
  // HDF5 cannot be closed cleanly once a write has failed (and crashes when it shuts down
  // later): a disk too small is refused before the file is created.
  std::uint64_t bytes = 1u << 20;  // attributes, small datasets, object headers
  for (const auto& table : tables) {
    const TableLayout& l = table.info.layout;
    const auto chunk = static_cast<std::int64_t>(chunk_rows(l.row_bytes(), l.rows));
    bytes += Hdf5StoredChunks::file_bytes(l.rows, chunk, l.row_bytes()) +
             Hdf5StoredChunks::file_bytes(l.rows, chunk, l.scale_bytes());
  }
  require_free_space(path, bytes, "the checkpoint");
  haddr_t data_end = 0;  // of the file's data, where HDF5 last allocated
  try {
    // No object times (the root group's, the groups', the datasets'): a file's bytes depend
    // on its contents alone.
    H5Id fcpl = check(H5Pcreate(H5P_FILE_CREATE), H5Pclose, "H5Pcreate");
    check(H5Pset_obj_track_times(fcpl.get(), 0), "H5Pset_obj_track_times");
    H5Id gcpl = check(H5Pcreate(H5P_GROUP_CREATE), H5Pclose, "H5Pcreate");
    check(H5Pset_obj_track_times(gcpl.get(), 0), "H5Pset_obj_track_times");
    H5Id file = check(H5Fcreate(partial.string().c_str(), H5F_ACC_TRUNC, fcpl.get(), checksummed_fapl().get()),
                      H5Fclose, partial.string() + ": cannot create");
    // The disk taken now: space that runs out later (another writer, a quota) fails here.
    reserve_file_space(partial, bytes, "the checkpoint");
    write_string_attribute(file.get(), "config", to_json(config).dump());
    write_int_attribute(file.get(), "pleshard_checkpoint_version", 1);
    // The map the tables are hashed through goes inside the file: one file is the whole model.
    if (config.token_map != nullptr) {
      const auto ids = config.token_map->ids();
      write_vector(file.get(), k_token_map_dataset, H5T_STD_I64LE, H5T_NATIVE_INT64, ids.data(), ids.size());
    }
    H5Id root = check(H5Gcreate2(file.get(), "/ple", H5P_DEFAULT, gcpl.get(), H5P_DEFAULT), H5Gclose, "/ple");
    std::uint64_t done = 0;
    for (const auto& table : tables) {
      const PleTableInfo& info = table.info;
      H5Id group =
          check(H5Gcreate2(file.get(), group_name(info.ple_index).c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT),
                H5Gclose, "cannot create " + group_name(info.ple_index));
      write_string_attribute(group.get(), "format", to_string(info.layout.format));
      write_int_attribute(group.get(), "head_dim", info.layout.head_dim);
      write_int_attribute(group.get(), "decoder_layer", info.decoder_layer);
      write_vector(group.get(), "global_scale", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, &info.global_scale, 1);
      const auto write_buffer = [&](const char* name, const std::vector<std::int64_t>& values) {
        if (!values.empty())
          write_vector(group.get(), name, H5T_STD_I64LE, H5T_NATIVE_INT64, values.data(), values.size());
      };
      write_buffer("layer_multipliers", info.multipliers);
      write_buffer("ngram_heads_vocab_sizes", info.head_sizes);
      write_buffer("ngram_heads_offsets", info.head_offsets);
      write_int_attribute(group.get(), "fingerprint", table_fingerprint(info));

      const std::size_t row_bytes = info.layout.row_bytes();
      const std::size_t scale_bytes = info.layout.scale_bytes();
      const std::int64_t rows = info.layout.rows;
      // Codes and scales chunked alike (the codes' 1 MiB of rows), so that a band of whole
      // chunks of one is whole chunks of the other.
      const hsize_t chunk = chunk_rows(row_bytes, rows);
      H5Id weight = create_rows_dataset(group.get(), "weight", rows, row_bytes, chunk);
      H5Id scales;
      if (scale_bytes != 0) scales = create_rows_dataset(group.get(), "weight_scale", rows, scale_bytes, chunk);
      if (rows == 0 || row_bytes == 0) continue;
      // Bands of whole chunks, about k_band_bytes each.
      const auto c = static_cast<std::int64_t>(chunk);
      const std::int64_t band =
          std::max<std::int64_t>(1, static_cast<std::int64_t>(items_per_band(row_bytes + scale_bytes)) / c) * c;
      // Making band k+1 and laying out its chunks as stored (threads of their own) overlaps
      // HDF5 placing band k's in the file on this thread, unless the rows come through HDF5 too.
      struct Band {
        std::vector<std::uint8_t> rows;
        std::vector<std::uint8_t> scales;
        Hdf5StoredChunks stored_rows;
        Hdf5StoredChunks stored_scales;
      };
      std::array<Band, 2> buffers;
      const auto bands = static_cast<std::size_t>((rows + band - 1) / band);
      const auto band_rows = [&](std::size_t k) {
        const auto begin = static_cast<std::int64_t>(k) * band;
        return std::pair{begin, std::min(rows, begin + band)};
      };
      const auto make = [&](std::size_t k, Band& b) {
        const auto [begin, end] = band_rows(k);
        const auto n = static_cast<std::size_t>(end - begin);
        b.rows.resize(n * row_bytes);
        b.scales.resize(n * scale_bytes);
        table.rows(begin, end, b.rows, b.scales);
        b.stored_rows.stage(rows, c, row_bytes, begin, end, b.rows);
        if (scale_bytes != 0) b.stored_scales.stage(rows, c, scale_bytes, begin, end, b.scales);
      };
      const std::string where = partial.string() + ": " + group_name(info.ple_index);
      const auto write = [&](std::size_t k, const Band& b) {
        const auto [begin, end] = band_rows(k);
        b.stored_rows.write(weight.get(), (where + "/weight").c_str());
        if (scale_bytes != 0) b.stored_scales.write(scales.get(), (where + "/weight_scale").c_str());
        done += static_cast<std::uint64_t>(end - begin) * (row_bytes + scale_bytes);
        if (progress) progress(done);
      };
      if (table.reads_hdf5) {
        for (std::size_t k = 0; k < bands; ++k) {
          make(k, buffers[0]);
          write(k, buffers[0]);
        }
      } else {
        overlap_bands(bands, buffers, make, write);
      }
    }
    if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0) throw SystemError(partial.string() + ": flush failed (disk full?)");
    check(H5Fget_eoa(file.get(), &data_end), "H5Fget_eoa");
  } catch (...) {
    std::error_code ignored;
    fs::remove(partial, ignored);  // closed above: no half-written file is left
    throw;
  }
  fs::resize_file(partial, data_end);  // the reserved space HDF5 did not use
  sync_file(partial);
  commit_file(partial, path);
}

}  // namespace pleshard::detail
