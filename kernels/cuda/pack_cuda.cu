#include "kernels/cuda/pack_cuda.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/id_tally.cuh"
#include "kernels/cuda/launch_tasks.cuh"
#include "kernels/cuda/warp_bytes.cuh"

namespace pleshard::kernels {

namespace {

constexpr int k_threads = 256;

constexpr int k_warp = 32;

int blocks_for(std::int64_t n) {
  return static_cast<int>(std::clamp<std::int64_t>((n * k_warp + k_threads - 1) / k_threads, 1, 1 << 16));
}

// A warp per row: a packed row is a few hundred bytes, read by the warp in wide words (from
// pinned host memory, one or two round trips over PCIe).
__global__ void pack_rows(const __grid_constant__ LaunchTasks<PackTask> step) {
  const PackTask task = step.tasks[blockIdx.y];
  const std::size_t pitch = packed_row_bytes(task.table.format, task.table.head_dim);
  const WarpBytes bytes{static_cast<int>(threadIdx.x % k_warp)};
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / k_warp);
  for (std::int64_t i = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / k_warp; i < task.count;
       i += warps)
    pack_stored_row(task.table, task.keys[i], task.out + static_cast<std::size_t>(i) * pitch, bytes);
}

// Every thread of a block reaches the tally (blocks are whole warps).
__global__ void widen_local_ids(const std::uint8_t* __restrict__ ids, int width, std::int64_t count, std::int64_t first,
                                std::int64_t* __restrict__ out, const IdTally tally, int layer) {
  unsigned long long outside = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t id = widen_local_id(ids, width, i, first);
    out[i] = id;
    if (tally.outside != nullptr) outside += tally.counts(layer, i, id) ? 1 : 0;
  }
  if (tally.outside != nullptr) add_to_tally(tally, layer, outside);
}

}  // namespace

void pack_rows_cuda(std::span<const PackTask> tasks, cudaStream_t stream) {
  std::int64_t most = 0;
  const LaunchTasks<PackTask> step = launch_tasks(tasks, "pack_rows_cuda", most);
  if (step.count == 0) return;
  pack_rows<<<launch_grid(blocks_for(most), step), k_threads, 0, stream>>>(step);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

void widen_local_ids_cuda(const std::uint8_t* ids, int width, std::int64_t count, std::int64_t first, std::int64_t* out,
                          cudaStream_t stream, const IdTally& tally, int layer) {
  if (count == 0) return;
  widen_local_ids<<<static_cast<int>(std::min<std::int64_t>((count + k_threads - 1) / k_threads, 1 << 16)), k_threads,
                    0, stream>>>(ids, width, count, first, out, tally, layer);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

}  // namespace pleshard::kernels
