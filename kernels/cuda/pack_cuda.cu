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

}  // namespace

void pack_rows_cuda(std::span<const PackTask> tasks, cudaStream_t stream) {
  for (const PackTask& task : tasks) {
    if (task.count == 0) continue;
    pack_rows<<<blocks_for(task.count), k_threads, 0, stream>>>(
        task, packed_row_bytes(task.table.format, task.table.head_dim));
    PLESHARD_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace pleshard::kernels
