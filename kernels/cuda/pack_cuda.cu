#include "kernels/cuda/pack_cuda.hpp"

#include <algorithm>

#include "kernels/cuda/cuda_check.hpp"

namespace pleshard::kernels {

namespace {

constexpr int k_threads = 256;

constexpr int k_warp = 32;

int blocks_for(std::int64_t n) {
  return static_cast<int>(std::clamp<std::int64_t>((n * k_warp + k_threads - 1) / k_threads, 1, 1 << 16));
}

// A warp per row: a packed row is a few hundred bytes, read by the warp as runs of
// consecutive bytes (from pinned host memory, a transaction per run rather than per byte).
__global__ void pack_rows(PackTask task, std::size_t pitch) {
  const int lane = static_cast<int>(threadIdx.x % k_warp);
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / k_warp);
  for (std::int64_t i = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / k_warp; i < task.count;
       i += warps)
    pack_stored_row(task.table, task.keys[i], task.out + static_cast<std::size_t>(i) * pitch, lane, k_warp);
}

__global__ void widen_local_ids(const std::uint8_t* __restrict__ ids, int width, std::int64_t count, std::int64_t first,
                                std::int64_t* __restrict__ out) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    out[i] = widen_local_id(ids, width, i, first);
}

}  // namespace

void pack_rows_cuda(std::span<const PackTask> tasks, cudaStream_t stream) {
  for (const PackTask& task : tasks) {
    if (task.count == 0) continue;
    pack_rows<<<blocks_for(task.count), k_threads, 0, stream>>>(
        task, packed_row_bytes(task.table.format, task.table.head_dim));
    PLESHARD_CUDA_CHECK_LAUNCH();
  }
}

void widen_local_ids_cuda(const std::uint8_t* ids, int width, std::int64_t count, std::int64_t first, std::int64_t* out,
                          cudaStream_t stream) {
  if (count == 0) return;
  widen_local_ids<<<static_cast<int>(std::min<std::int64_t>((count + k_threads - 1) / k_threads, 1 << 16)), k_threads,
                    0, stream>>>(ids, width, count, first, out);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

}  // namespace pleshard::kernels
