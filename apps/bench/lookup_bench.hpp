#pragma once
// `pleshard bench lookup`: rows/s and GB/s of a storage tier's lookup for each row format
// and ids-per-step size, validated element by element (#wrong). GB/s follows FBGEMM:
// (rows read * stored row bytes, scales included + rows written * output row bytes) / time.
// The disk tier reads each distinct row once; its GB/s counts the rows it read. The pinned
// tier is also measured with a device-tier lookup running beside it. Each tier beside its
// ceiling in the same run: a memcpy of the rows' bytes for the host tier, the rows' bytes
// gathered without decoding for a GPU tier.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include "ckpt/ple_checkpoint.hpp"
#include "format/row_format.hpp"
#include "store/storage_tier.hpp"

namespace pleshard {

struct LookupBenchOptions {
  std::vector<StorageTier> tiers{StorageTier::host};  // the GPU tiers need CUDA
  std::vector<RowFormat> formats{RowFormat::f32, RowFormat::bf16, RowFormat::f16, RowFormat::fp8, RowFormat::nvfp4};
  std::vector<std::int64_t> ids_per_step{1, 64, 8192, 1 << 20};
  std::int64_t rows = 1 << 20;  // table rows (ids are uniform over them)
  // Rows of the device table beside the pinned one in "pinned|device" (0: `rows`).
  std::int64_t beside_rows = 0;
  [[nodiscard]] std::int64_t device_rows_beside() const { return beside_rows != 0 ? beside_rows : rows; }
  int head_dim = 160;
  OutDtype out_dtype = OutDtype::bf16;
  // The disk tier's checkpoint is written here (a fresh directory, removed afterwards);
  // its cached pages are dropped before every timed step, so reads come from the device.
  std::filesystem::path disk_dir = std::filesystem::temp_directory_path();
  double min_seconds = 0.2;
  int min_repeats = 5;
  // The pinned tier's gather cap in blocks per SM (GpuTable); -1: the library's default.
  int uva_blocks_per_sm = -1;
};

struct LookupBenchResult {
  // "device"; "device-plain" for the plain warp-per-row byte gather of the same rows;
  // "pinned|device" for a pinned lookup with device-tier lookups of the same ids (modulo
  // the device table's rows, LookupBenchOptions::beside_rows) on another stream at once
  // (rows and bytes of all), which shows whether the pinned gather leaves room for other work.
  // "host-memcpy": a memcpy of as many bytes as the ids' stored rows, on the host lookup's
  // threads (host_lookup_threads()), the host tier's ceiling.
  std::string tier;
  RowFormat format = RowFormat::bf16;
  std::int64_t ids = 0;
  double seconds = 0;  // median per step, max over ranks
  double bytes = 0;    // per step, FBGEMM convention
  std::int64_t wrong = 0;
  // "pinned|device" only: the share of the device work's own time hidden behind the pinned
  // lookup (1: all of it, 0: none, the two ran one after the other).
  std::optional<double> hidden = std::nullopt;
  // The tier of the row (same format and ids) whose GB/s is this one's ceiling; empty: none.
  std::string ceiling = {};

  [[nodiscard]] double rows_per_second() const { return static_cast<double>(ids) / seconds; }
  [[nodiscard]] double gigabytes_per_second() const { return bytes / seconds * 1e-9; }
};

// Threads the host tier's lookup runs on: Kokkos' host space's, else --kokkos-threads'.
[[nodiscard]] std::size_t host_lookup_threads();

// The lookup cases' tables and checks, shared by the host's and the GPU's cases.
// A one-table config whose rows are synthetic values of `format`.
[[nodiscard]] ModelConfig bench_config(RowFormat format, std::int64_t rows, int head_dim);
// Exactly `rows` rows, not the prime the config implies (rows are a function of their index).
[[nodiscard]] TableSource bench_table(const ModelConfig& config, RowFormat format, std::int64_t rows);
// Rows of `row_bytes` that differ between a tier's output and the reference.
[[nodiscard]] std::int64_t count_wrong_rows(const std::vector<std::uint8_t>& got,
                                            const std::vector<std::uint8_t>& expected, std::size_t row_bytes);
// The output a lookup of `ids` must give, each row made alone by the table's source.
[[nodiscard]] std::vector<std::uint8_t> expected_output(const TableSource& source, const std::vector<std::int64_t>& ids,
                                                        OutDtype dtype);

// Collective over `comm`: each rank benchmarks its own table; times reduced with MAX.
[[nodiscard]] std::vector<LookupBenchResult> run_lookup_bench(MPI_Comm comm, const LookupBenchOptions& options);

}  // namespace pleshard
