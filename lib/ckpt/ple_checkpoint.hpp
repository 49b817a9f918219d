#pragma once
// PLE checkpoints (docs/design.md §4): the vLLM safetensors layout and pleshard's native HDF5
// layout behind one reader interface. Opening validates everything that can be checked
// without reading the rows; read_rows copies any row range of one table.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <mpi.h>

#include "format/row_anomalies.hpp"
#include "format/row_format.hpp"
#include "io/file_checks.hpp"
#include "io/file_reads.hpp"
#include "model/model_config.hpp"
#include "model/table_spec.hpp"

namespace pleshard {

inline constexpr const char* k_default_layer_prefix = "model.language_model.layers.{L}.ple.ple_embedding";

// One PLE table as a checkpoint stores it.
struct PleTableInfo {
  int ple_index = 0;
  int decoder_layer = 0;  // the config's own id: Qwen4Exp's 1-based, Engram's 0-based
  TableLayout layout;     // rows = padded rows
  float global_scale = 1.0f;
  // Hash buffers; empty when the checkpoint does not carry them.
  std::vector<std::int64_t> multipliers;
  std::vector<std::int64_t> head_sizes;
  std::vector<std::int64_t> head_offsets;
};

// synthetic: tables generated where they are read, no file (benchmarks at any size).
enum class CheckpointKind { safetensors, hdf5, synthetic };

// Consecutive rows [first, first + count) of a sorted row set, packed from position `at`.
struct RowRun {
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::int64_t at = 0;
};
[[nodiscard]] std::vector<RowRun> row_runs(std::span<const std::int64_t> sorted_rows);
[[nodiscard]] const char* to_string(CheckpointKind kind);
[[nodiscard]] CheckpointKind parse_checkpoint_kind(std::string_view name);

// Produces rows [begin, end) of one table: stored row bytes and (block-scaled formats) block scales.
using RowSource = std::function<void(std::int64_t begin, std::int64_t end, std::span<std::uint8_t> rows,
                                     std::span<std::uint8_t> scales)>;

// Rows that are synthetic values (kernels/common/synthetic_rows.hpp) of this seed: a tier
// may generate them where it keeps them instead of asking `rows`.
struct SyntheticRows {
  std::uint64_t seed = 0;
};

// Rows a tier that keeps them in host memory may read past the page cache (safetensors):
// `rows` as TableSource::rows, straight into a buffer at the alignment of `file_offset` of
// its first row (PreadFile::read_exact_past_cache).
struct RowsPastCache {
  std::function<std::uint64_t(std::int64_t row)> file_offset;  // of the row's codes
  RowSource rows;
};

struct TableSource {
  PleTableInfo info;
  RowSource rows;
  std::optional<RowsPastCache> past_cache = std::nullopt;
  std::optional<SyntheticRows> synthetic = std::nullopt;
  // Rows read through HDF5: never called beside another HDF5 call (the library is not
  // thread-safe), so an HDF5 writer does not overlap them with its writes.
  bool reads_hdf5 = false;
  // Rows of each of the source's stored chunks, counted from row 0: a call for part of one
  // reads it whole, so loads read whole chunks (0: the source has none, or they are unknown).
  std::int64_t chunk_rows = 0;
};

class PleCheckpoint {
 public:
  virtual ~PleCheckpoint() = default;

  [[nodiscard]] virtual CheckpointKind kind() const = 0;
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::vector<PleTableInfo>& tables() const { return tables_; }
  [[nodiscard]] const PleTableInfo& table(int ple_index) const {
    return tables_.at(static_cast<std::size_t>(ple_index));
  }

  // Copies rows [begin, end) of table `ple_index`: stored row bytes into `rows`, and for
  // block-scaled formats the block scales into `scales`; an empty span is not read (the disk
  // tier reads block scales once, into memory, and then only codes). With HDF5 and MPI-IO,
  // every rank of the communicator the checkpoint was opened with must call it for the same
  // table together.
  virtual void read_rows(int ple_index, std::int64_t begin, std::int64_t end, std::span<std::uint8_t> rows,
                         std::span<std::uint8_t> scales) const = 0;

  // Copies the rows `sorted_rows` (ascending, distinct) of table `ple_index`, packed in that
  // order: the disk tier's read of one step. Each rank reads on its own, so a checkpoint
  // opened for collective reads refuses. Runs of consecutive rows are read together. An
  // empty `scales` reads the codes only.
  virtual void read_row_set(int ple_index, std::span<const std::int64_t> sorted_rows, std::span<std::uint8_t> rows,
                            std::span<std::uint8_t> scales) const;

  // One table's rows for read_row_sets, as read_row_set takes them.
  struct RowSet {
    int ple_index = 0;
    std::span<const std::int64_t> sorted_rows;
    std::span<std::uint8_t> rows;
    std::span<std::uint8_t> scales;
    // Many close rows read once, likely cold (RowQuery::bulk): rows further apart are read
    // together (safetensors).
    bool bulk = false;
  };
  // read_row_set of every set (a step's tables), their reads in flight together where the
  // format reads rows itself (safetensors, and HDF5 datasets located past the library, whose
  // chunks' checksums a step's rows are then not verified against: ckpt/row_set_reads.hpp;
  // through the page cache or past it, `cache`); one set after the other otherwise.
  virtual void read_row_sets(std::span<const RowSet> sets, PageCache cache) const {
    (void)cache;
    for (const RowSet& s : sets) read_row_set(s.ple_index, s.sorted_rows, s.rows, s.scales);
  }
  // Whether read_row_sets may run on another thread than the one that opened the checkpoint,
  // beside its other calls: it reads files itself, with no library that must stay on one
  // thread (HDF5's is not thread-safe, and through MPI-IO calls MPI, initialised for one).
  [[nodiscard]] virtual bool reads_row_sets_on_any_thread() const { return false; }

  // Whether read_rows is collective over the communicator the checkpoint was opened with.
  [[nodiscard]] virtual bool reads_collectively() const { return false; }

  // InputError naming the file when a file of the checkpoint has changed since it was
  // opened (truncated, rewritten, replaced): tiers that read rows during a job check it.
  void check_unchanged() const {
    for (const auto& file : identities_) file.check_unchanged();
  }

  // The files read_rows reads.
  [[nodiscard]] std::vector<std::string> files() const {
    std::vector<std::string> paths;
    for (const auto& file : identities_) paths.push_back(file.path());
    return paths;
  }

  // What the checkpoint holds, whatever its path: its kind, its tables (layout, scales, hash
  // buffers), the token map it carries (ckpt/checkpoint_token_map.hpp) and a sampled digest
  // of each file (sampled_content_digest). A job's progress
  // record keeps it, so that a checkpoint replaced between a kill and a rerun is not resumed
  // while the same one under another spelling of its path is.
  [[nodiscard]] virtual std::uint64_t content_identity() const;
  // The state of the files read_rows reads, as they were opened (FileIdentity::state): the
  // identity samples each file, so a range written in place between its samples leaves it
  // unchanged; this does not. A job resumes its completed parts only where every rank's
  // state is one the job that wrote them saw (job/job_output.hpp).
  [[nodiscard]] std::uint64_t file_state() const;
  // The SHA-256 of the token map the checkpoint carries ("" for none): set once by
  // open_ple_checkpoint, which knows the config it is checked against.
  void set_carried_token_map(std::string sha256) { carried_token_map_ = std::move(sha256); }

  // Reads every row band and checks whatever the format can check (HDF5 checksums); per
  // table, the rows whose values other stacks read differently (format/row_anomalies.hpp).
  virtual std::vector<RowAnomalies> verify_data(const std::function<void(double)>& progress) const;

  // The same anomalies among `rows_per_table` evenly spaced rows of each table (inspect's
  // quick look; verify reads them all).
  [[nodiscard]] std::vector<RowAnomalies> sample_anomalies(std::int64_t rows_per_table) const;

  // Table `ple_index` as a source of rows for a tier to load (read_rows by default).
  [[nodiscard]] virtual TableSource table_source(int ple_index) const;

 protected:
  std::string path_;
  std::vector<PleTableInfo> tables_;
  std::vector<FileIdentity> identities_;  // the files read_rows reads
  std::string carried_token_map_;         // set_carried_token_map
};

struct CheckpointOptions {
  std::string layer_prefix = k_default_layer_prefix;  // "{L}" is the 0-based decoder layer
  MPI_Comm comm = MPI_COMM_SELF;                      // ranks that read an HDF5 checkpoint collectively
  bool collective_io = true;                          // collective MPI-IO reads when HDF5 is parallel
  // Collective reads of a rank's rows go in bands of about this many bytes, as many on every
  // rank (MPI-IO transfers past 2 GiB per call fail in HDF5 1.10); 0: k_band_bytes.
  std::size_t read_band_bytes = 0;
};

struct WriteOptions {
  CheckpointKind kind = CheckpointKind::safetensors;
  int files = 1;  // safetensors: number of files the shards are spread over
  std::string layer_prefix = k_default_layer_prefix;
};

// Writes a checkpoint with bounded memory, table by table in row bands. A safetensors
// checkpoint is a directory (config.json beside the tensors); an HDF5 one is one file.
// Nothing appears under a final name before it is complete.
void write_checkpoint(const std::filesystem::path& path, const ModelConfig& config,
                      const std::vector<TableSource>& tables, const WriteOptions& options,
                      const std::function<void(std::uint64_t bytes)>& progress = {});

// A directory (safetensors files with or without model.safetensors.index.json, or one
// .h5 file), a .safetensors file, or a .h5 file. Throws InputError naming file and tensor.
[[nodiscard]] std::unique_ptr<PleCheckpoint> open_ple_checkpoint(const std::filesystem::path& path,
                                                                 const ModelConfig& config,
                                                                 const CheckpointOptions& options = {});

// The .h5 file an HDF5 checkpoint path names (the file, or a directory's one .h5); empty
// for a checkpoint of another kind.
[[nodiscard]] std::filesystem::path hdf5_checkpoint_file(const std::filesystem::path& checkpoint);

// The config of a checkpoint: `config_path` when given, else config.json beside the
// checkpoint (in the directory, or beside the file), else the config stored in an .h5;
// with its token map where the family hashes through one, chosen by the checkpoint's rule
// (ckpt/checkpoint_token_map.hpp: `token_map`, --token-map, when given).
[[nodiscard]] ModelConfig load_checkpoint_config(const std::filesystem::path& checkpoint,
                                                 const std::filesystem::path& config_path = {},
                                                 const std::filesystem::path& token_map = {});

// The spec to hash with: the derived one, with the checkpoint's hash buffers taking
// precedence where present (each difference logged); InputError naming `source` when a head
// lies outside the table. open_ple_checkpoint runs the same checks.
[[nodiscard]] TableSpec hashing_spec(const TableSpec& derived, const PleTableInfo& table, const std::string& source,
                                     bool log_differences = true);

}  // namespace pleshard
