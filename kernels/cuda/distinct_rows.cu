#include "kernels/cuda/distinct_rows.hpp"

#include <algorithm>
#include <string>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/lookup_cuda.hpp"
#include "kernels/host/row_gather_host.hpp"

namespace pleshard::kernels {

namespace {

constexpr int k_threads = 256;

// The packed block of `n` rows: the codes (256-byte aligned), then the block scales.
std::size_t block_bytes(std::size_t n, std::size_t row_bytes, std::size_t scale_bytes) {
  return (n * row_bytes + 255) / 256 * 256 + n * scale_bytes;
}
std::size_t scale_bytes_of(const TableView& table) {
  return table.block_scales != nullptr ? scale_row_bytes(table.format, table.head_dim) : 0;
}

// One warp per distinct row from the `first`, in ascending address order; 16-byte words
// where aligned. The count of distinct rows is on the device (the plan's), so the launch
// covers the worst case and warps past the end return. The staging table is packed.
__global__ void gather_distinct(TableView table, std::size_t row_bytes, std::size_t scale_bytes,
                                const std::uint32_t* __restrict__ distinct, const std::int64_t* __restrict__ count_at,
                                std::int64_t first, std::uint8_t* __restrict__ staged_rows,
                                std::uint8_t* __restrict__ staged_scales) {
  const std::int64_t count = *count_at;
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  const bool wide = row_bytes % 16 == 0 && table.row_stride() % 16 == 0;
  for (std::int64_t r = first + blockIdx.x * static_cast<std::int64_t>(blockDim.x / 32) + (threadIdx.x >> 5); r < count;
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

}  // namespace

DistinctRows::~DistinctRows() { release(); }

void DistinctRows::release() noexcept {
  if (memory_ != nullptr) cudaFree(memory_);
  if (host_memory_ != nullptr) cudaFreeHost(host_memory_);
  memory_ = nullptr;
  host_memory_ = nullptr;
  capacity_ = 0;
  host_capacity_ = 0;
}

std::size_t DistinctRows::bytes_for(const TableView& table, std::int64_t max_ids) {
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(1, max_ids));
  return DeviceRowPlan::bytes_for(1, max_ids) +
         block_bytes(n, stored_row_bytes(table.format, table.head_dim), scale_bytes_of(table));
}

void DistinctRows::reserve(const TableView& table, std::int64_t max_ids) {
  const std::int64_t bounds[2] = {table.row_begin, table.row_end};
  plan_.reserve(bounds, max_ids);
  const std::size_t row_bytes = stored_row_bytes(table.format, table.head_dim);
  const std::size_t scale_bytes = scale_bytes_of(table);
  if (max_ids <= capacity_ && row_bytes == row_bytes_ && scale_bytes == scale_bytes_) return;
  release();
  if (gather_blocks_per_sm_ > 0) {
    int device = 0;
    int sms = 1;
    PLESHARD_CUDA_CHECK(cudaGetDevice(&device));
    PLESHARD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    gather_max_blocks_ = std::min(1 << 16, gather_blocks_per_sm_ * sms);
  }
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(1, max_ids));
  const std::size_t rows_bytes = (n * row_bytes + 255) / 256 * 256;
  PLESHARD_CUDA_CHECK(cudaMalloc(&memory_, block_bytes(n, row_bytes, scale_bytes)));
  staged_rows_ = static_cast<std::uint8_t*>(memory_);
  staged_scales_ = staged_rows_ + rows_bytes;
  capacity_ = max_ids;
  row_bytes_ = row_bytes;
  scale_bytes_ = scale_bytes;
}

namespace {

// A host gather's rows cross in up to k_host_copies copies of at least k_host_copy_rows
// rows (about 1 MB of 264-byte rows): each starts while the host gathers the next.
constexpr std::int64_t k_host_copies = 8;
constexpr std::int64_t k_host_copy_rows = 4096;

// The host staging of `n` ids: the distinct count, n offsets (8-byte aligned), then the block.
std::size_t offsets_bytes(std::size_t n) { return sizeof(std::int64_t) + (n * sizeof(std::uint32_t) + 7) / 8 * 8; }

}  // namespace

std::size_t DistinctRows::host_bytes_for(const TableView& table, std::int64_t max_ids) {
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(1, max_ids));
  return offsets_bytes(n) + block_bytes(n, stored_row_bytes(table.format, table.head_dim), scale_bytes_of(table));
}

void DistinctRows::reserve_host(const TableView& table, std::int64_t max_ids) {
  reserve(table, max_ids);
  if (host_capacity_ >= capacity_ && host_memory_ != nullptr) return;
  if (host_memory_ != nullptr) PLESHARD_CUDA_CHECK(cudaFreeHost(host_memory_));
  host_memory_ = nullptr;
  PLESHARD_CUDA_CHECK(cudaHostAlloc(&host_memory_, host_bytes_for(table, capacity_), cudaHostAllocDefault));
  host_capacity_ = capacity_;
}

void DistinctRows::plan_for_host(const TableView& table, const std::int64_t* ids, std::int64_t num_ids,
                                 cudaStream_t stream) {
  reserve_host(table, num_ids);  // nothing to do once reserved: the engine reserves first
  planned_ids_ = num_ids;
  auto* count = static_cast<std::int64_t*>(host_memory_);
  *count = 0;
  if (num_ids == 0) return;
  plan_.plan(ids, num_ids, stream);
  PLESHARD_CUDA_CHECK(cudaMemcpyAsync(count, plan_.owners() + plan_.owner_count(), sizeof(std::int64_t),
                                      cudaMemcpyDeviceToHost, stream));
  // Every lookup's worth: the count is known on the device only.
  PLESHARD_CUDA_CHECK(cudaMemcpyAsync(count + 1, plan_.distinct(),
                                      static_cast<std::size_t>(num_ids) * sizeof(std::uint32_t), cudaMemcpyDeviceToHost,
                                      stream));
}

std::int64_t DistinctRows::planned_rows() const {
  return planned_ids_ == 0 ? 0 : *static_cast<const std::int64_t*>(host_memory_);
}

void DistinctRows::gather_rest_on_gpu(const TableView& table, std::int64_t first, cudaStream_t stream) {
  const std::int64_t rest = planned_rows() - first;
  if (rest <= 0) return;
  const int warps_per_block = k_threads / 32;
  gather_distinct<<<static_cast<int>(
                        std::min<std::int64_t>((rest + warps_per_block - 1) / warps_per_block, gather_max_blocks_)),
                    k_threads, 0, stream>>>(table, row_bytes_, scale_bytes_, plan_.distinct(),
                                            plan_.owners() + plan_.owner_count(), first, staged_rows_, staged_scales_);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

DecodeTask DistinctRows::gather_on_host(const TableView& table, std::size_t threads, cudaStream_t stream,
                                        std::int64_t rows) {
  const TableView staged{table.format,      table.head_dim, 0,
                         planned_ids_,      staged_rows_,   scale_bytes_ != 0 ? staged_scales_ : nullptr,
                         table.global_scale};
  auto* count_at = static_cast<std::int64_t*>(host_memory_);
  const std::int64_t count = rows < 0 ? planned_rows() : std::min(rows, planned_rows());
  if (planned_ids_ == 0 || count <= 0) return {staged, plan_.keys(), planned_ids_, nullptr};
  const auto* offsets = reinterpret_cast<const std::uint32_t*>(count_at + 1);
  auto* host_rows = static_cast<std::uint8_t*>(host_memory_) + offsets_bytes(static_cast<std::size_t>(host_capacity_));
  std::uint8_t* host_scales = host_rows + (staged_scales_ - staged_rows_);
  // In pieces, each copied up as soon as it is gathered: the bus moves one while the host
  // gathers the next.
  const std::int64_t piece = std::max(k_host_copy_rows, (count + k_host_copies - 1) / k_host_copies);
  for (std::int64_t begin = 0; begin < count; begin += piece) {
    const auto first = static_cast<std::size_t>(begin);
    const auto n = static_cast<std::size_t>(std::min(count, begin + piece) - begin);
    gather_rows_host(table, offsets + begin, static_cast<std::int64_t>(n), host_rows + first * row_bytes_,
                     host_scales + first * scale_bytes_, threads);
    PLESHARD_CUDA_CHECK(cudaMemcpyAsync(staged_rows_ + first * row_bytes_, host_rows + first * row_bytes_,
                                        n * row_bytes_, cudaMemcpyHostToDevice, stream));
    if (scale_bytes_ != 0)
      PLESHARD_CUDA_CHECK(cudaMemcpyAsync(staged_scales_ + first * scale_bytes_, host_scales + first * scale_bytes_,
                                          n * scale_bytes_, cudaMemcpyHostToDevice, stream));
  }
  return {staged, plan_.keys(), planned_ids_, nullptr};
}

DecodeTask DistinctRows::gather(const TableView& table, const std::int64_t* ids, std::int64_t num_ids,
                                cudaStream_t stream) {
  reserve(table, num_ids);  // nothing to do once reserved for the table: the engine reserves first
  const TableView staged{table.format,      table.head_dim, 0,
                         num_ids,           staged_rows_,   scale_bytes_ != 0 ? staged_scales_ : nullptr,
                         table.global_scale};
  if (num_ids == 0) return {staged, plan_.keys(), 0, nullptr};
  plan_.plan(ids, num_ids, stream);
  const int warps_per_block = k_threads / 32;
  gather_distinct<<<static_cast<int>(
                        std::min<std::int64_t>((num_ids + warps_per_block - 1) / warps_per_block, gather_max_blocks_)),
                    k_threads, 0, stream>>>(table, row_bytes_, scale_bytes_, plan_.distinct(),
                                            plan_.owners() + plan_.owner_count(), 0, staged_rows_, staged_scales_);
  PLESHARD_CUDA_CHECK_LAUNCH();
  return {staged, plan_.keys(), num_ids, nullptr};
}

void DistinctRows::lookup(const TableView& table, const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype,
                          void* out, cudaStream_t stream) {
  DecodeTask task = gather(table, ids, num_ids, stream);
  task.out = out;
  decode_step_cuda({&task, 1}, dtype, stream);
}

}  // namespace pleshard::kernels
