#include "kernels/cuda/pack_cuda.hpp"

#include <algorithm>

#include "kernels/cuda/cuda_check.hpp"

namespace pleshard::kernels {

namespace {

constexpr int k_threads = 256;

int blocks_for(std::int64_t n) {
  return static_cast<int>(std::clamp<std::int64_t>((n + k_threads - 1) / k_threads, 1, 1 << 16));
}

// One thread per row: a packed row is a few hundred bytes at most.
__global__ void pack_rows(PackTask task, std::size_t pitch) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < task.count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    pack_stored_row(task.table, task.keys[i], task.out + static_cast<std::size_t>(i) * pitch);
}

__global__ void widen_ids(const std::uint8_t* __restrict__ ids, int width, std::int64_t count, std::int64_t first,
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

void widen_ids_cuda(const std::uint8_t* ids, int width, std::int64_t count, std::int64_t first, std::int64_t* out,
                    cudaStream_t stream) {
  if (count == 0) return;
  widen_ids<<<blocks_for(count), k_threads, 0, stream>>>(ids, width, count, first, out);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

}  // namespace pleshard::kernels
