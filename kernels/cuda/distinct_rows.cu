#include "kernels/cuda/distinct_rows.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <string>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/lookup_cuda.hpp"

namespace pleshard::kernels {

namespace {

constexpr int k_threads = 256;

int blocks_for(std::int64_t n) {
  return static_cast<int>(std::min<std::int64_t>((n + k_threads - 1) / k_threads, 1 << 16));
}

// Ids the table does not hold get the sentinel key `none` (the table's row count), which
// sorts last.
__global__ void make_keys(TableView table, const std::int64_t* __restrict__ ids, std::int64_t n,
                          std::uint32_t* __restrict__ keys, std::uint32_t* __restrict__ positions) {
  const auto none = static_cast<std::uint32_t>(table.row_end - table.row_begin);
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t id = ids[i];
    keys[i] = table.owns(id) ? static_cast<std::uint32_t>(id - table.row_begin) : none;
    positions[i] = static_cast<std::uint32_t>(i);
  }
}

__global__ void mark_heads(const std::uint32_t* __restrict__ sorted, std::int64_t n,
                           std::uint32_t* __restrict__ heads) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    heads[i] = (i == 0 || sorted[i] != sorted[i - 1]) ? 1u : 0u;
}

// runs[i] counts the distinct keys of sorted[0..i]; the staging row of sorted id i is runs[i] - 1.
__global__ void scatter_runs(TableView table, const std::uint32_t* __restrict__ sorted,
                             const std::uint32_t* __restrict__ positions, const std::uint32_t* __restrict__ runs,
                             std::int64_t n, std::int64_t* __restrict__ remapped,
                             std::uint32_t* __restrict__ distinct) {
  const auto none = static_cast<std::uint32_t>(table.row_end - table.row_begin);
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t key = sorted[i];
    const std::uint32_t run = runs[i] - 1;
    remapped[positions[i]] = key == none ? -1 : static_cast<std::int64_t>(run);
    if (key != none && (i == 0 || sorted[i - 1] != key)) distinct[run] = key;
  }
}

// One warp per distinct row, in ascending address order; 16-byte words where aligned.
// The count of distinct rows is on the device (the last run count), so the launch covers
// the worst case and warps past the end return. The staging table is packed.
__global__ void gather_distinct(TableView table, std::size_t row_bytes, std::size_t scale_bytes,
                                const std::uint32_t* __restrict__ distinct, const std::uint32_t* __restrict__ runs,
                                const std::uint32_t* __restrict__ sorted, std::int64_t n, std::uint32_t none,
                                std::uint8_t* __restrict__ staged_rows, std::uint8_t* __restrict__ staged_scales) {
  if (n == 0) return;
  const std::int64_t count = static_cast<std::int64_t>(runs[n - 1]) - (sorted[n - 1] == none ? 1 : 0);
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  const bool wide = row_bytes % 16 == 0 && table.row_stride() % 16 == 0;
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x / 32) + (threadIdx.x >> 5); r < count;
       r += warps) {
    const std::uint8_t* src = table.row_at(distinct[r]);
    std::uint8_t* dst = staged_rows + static_cast<std::size_t>(r) * row_bytes;
    if (wide) {
      for (std::size_t w = static_cast<std::size_t>(lane); w < row_bytes / 16; w += 32)
        reinterpret_cast<uint4*>(dst)[w] = reinterpret_cast<const uint4*>(src)[w];
    } else {
      for (std::size_t b = static_cast<std::size_t>(lane); b < row_bytes; b += 32) dst[b] = src[b];
    }
    if (scale_bytes != 0) {
      const std::uint8_t* s = table.scales_at(distinct[r]);
      for (std::size_t b = static_cast<std::size_t>(lane); b < scale_bytes; b += 32)
        staged_scales[static_cast<std::size_t>(r) * scale_bytes + b] = s[b];
    }
  }
}

std::size_t round_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

DistinctRows::~DistinctRows() { release(); }

void DistinctRows::release() noexcept {
  if (memory_ != nullptr) cudaFree(memory_);
  memory_ = nullptr;
  capacity_ = 0;
}

void DistinctRows::reserve(const TableView& table, std::int64_t max_ids) {
  const std::size_t row_bytes = stored_row_bytes(table.format, table.head_dim);
  const std::size_t scale_bytes = table.block_scales != nullptr ? scale_row_bytes(table.format, table.head_dim) : 0;
  if (max_ids <= capacity_ && row_bytes == row_bytes_ && scale_bytes == scale_bytes_) return;
  if (max_ids > std::numeric_limits<int>::max())
    throw SystemError("DistinctRows: " + std::to_string(max_ids) + " ids exceed CUB's int sizes");
  release();
  if (gather_blocks_per_sm_ > 0) {
    int device = 0;
    int sms = 1;
    PLESHARD_CUDA_CHECK(cudaGetDevice(&device));
    PLESHARD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    gather_max_blocks_ = std::min(1 << 16, gather_blocks_per_sm_ * sms);
  }
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(1, max_ids));
  std::size_t sort_bytes = 0;
  std::size_t scan_bytes = 0;
  PLESHARD_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, sort_bytes, static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr),
      static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr), static_cast<int>(n)));
  PLESHARD_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, static_cast<const std::uint32_t*>(nullptr),
                                                    static_cast<std::uint32_t*>(nullptr), static_cast<int>(n)));
  temp_bytes_ = std::max(sort_bytes, scan_bytes);
  const std::size_t words = round_up(n * 4);
  const std::size_t total =
      6 * words + round_up(n * 8) + round_up(n * row_bytes) + round_up(n * scale_bytes) + round_up(temp_bytes_);
  PLESHARD_CUDA_CHECK(cudaMalloc(&memory_, total));
  auto* p = static_cast<std::uint8_t*>(memory_);
  auto take = [&p](std::size_t bytes) {
    std::uint8_t* at = p;
    p += round_up(bytes);
    return at;
  };
  keys_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
  sorted_keys_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
  positions_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
  sorted_positions_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
  runs_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
  distinct_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
  remapped_ = reinterpret_cast<std::int64_t*>(take(n * 8));
  staged_rows_ = take(n * row_bytes);
  staged_scales_ = take(n * scale_bytes);
  temp_ = take(temp_bytes_);
  capacity_ = max_ids;
  row_bytes_ = row_bytes;
  scale_bytes_ = scale_bytes;
}

DecodeTask DistinctRows::gather(const TableView& table, const std::int64_t* ids, std::int64_t num_ids,
                                cudaStream_t stream) {
  const std::int64_t rows = table.row_end - table.row_begin;
  if (rows >= k_max_distinct_rows) throw SystemError("DistinctRows: tables of 2^32 - 1 rows or more are not supported");
  if (num_ids > std::numeric_limits<int>::max())
    throw SystemError("DistinctRows: " + std::to_string(num_ids) + " ids exceed CUB's int sizes");
  reserve(table, num_ids);
  const TableView staged{table.format,      table.head_dim, 0,
                         num_ids,           staged_rows_,   scale_bytes_ != 0 ? staged_scales_ : nullptr,
                         table.global_scale};
  if (num_ids == 0) return {staged, remapped_, 0, nullptr};
  const int blocks = blocks_for(num_ids);
  const int n = static_cast<int>(num_ids);
  const auto none = static_cast<std::uint32_t>(rows);
  const int end_bit = std::bit_width(none);  // keys are at most `none`

  make_keys<<<blocks, k_threads, 0, stream>>>(table, ids, num_ids, keys_, positions_);
  PLESHARD_CUDA_CHECK_LAUNCH();
  std::size_t temp_bytes = temp_bytes_;
  PLESHARD_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_, temp_bytes, keys_, sorted_keys_, positions_,
                                                      sorted_positions_, n, 0, std::max(end_bit, 1), stream));
  mark_heads<<<blocks, k_threads, 0, stream>>>(sorted_keys_, num_ids, keys_);  // keys_ reused for head flags
  PLESHARD_CUDA_CHECK_LAUNCH();
  temp_bytes = temp_bytes_;
  PLESHARD_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp_, temp_bytes, keys_, runs_, n, stream));
  scatter_runs<<<blocks, k_threads, 0, stream>>>(table, sorted_keys_, sorted_positions_, runs_, num_ids, remapped_,
                                                 distinct_);
  PLESHARD_CUDA_CHECK_LAUNCH();
  const int warps_per_block = k_threads / 32;
  gather_distinct<<<static_cast<int>(
                        std::min<std::int64_t>((num_ids + warps_per_block - 1) / warps_per_block, gather_max_blocks_)),
                    k_threads, 0, stream>>>(table, row_bytes_, scale_bytes_, distinct_, runs_, sorted_keys_, num_ids,
                                            none, staged_rows_, staged_scales_);
  PLESHARD_CUDA_CHECK_LAUNCH();
  return {staged, remapped_, num_ids, nullptr};
}

void DistinctRows::lookup(const TableView& table, const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype,
                          void* out, cudaStream_t stream) {
  DecodeTask task = gather(table, ids, num_ids, stream);
  task.out = out;
  decode_step_cuda({&task, 1}, dtype, stream);
}

}  // namespace pleshard::kernels
