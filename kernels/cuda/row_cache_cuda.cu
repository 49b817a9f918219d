#include "kernels/cuda/row_cache_cuda.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch_tasks.cuh"
#include "kernels/cuda/warp_bytes.cuh"

namespace pleshard::kernels {

namespace {

constexpr int k_threads = 256;
constexpr int k_warp = 32;
constexpr unsigned k_all_lanes = 0xffffffffu;

int blocks_for(std::int64_t n) {
  return static_cast<int>(std::clamp<std::int64_t>((n + k_threads - 1) / k_threads, 1, 1 << 16));
}

// A step's layers in one launch each for the clock, the probe and the fill, so that the
// layers' reads of the slow tier are in flight together; every layer's clock advances, with
// lookups or without.
using CacheSteps = LaunchTasks<CacheTask>;

// The step's table of misses cleared and its clock advanced, every layer of the launch.
__global__ void begin_step(const __grid_constant__ CacheSteps step) {
  const CacheTask& task = step.tasks[blockIdx.y];
  if (blockIdx.x == 0 && threadIdx.x == 0) ++task.counters[2];
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < task.cache.step_entries;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    task.cache.step_keys[e] = 0;
}

struct StepKeys {
  __device__ std::uint64_t swap_key(std::uint64_t* p, std::uint64_t expected, std::uint64_t desired) const {
    return atomicCAS(reinterpret_cast<unsigned long long*>(p), expected, desired);
  }
};

__global__ void probe(const __grid_constant__ CacheSteps step) {
  const CacheTask& task = step.tasks[blockIdx.y];
  // The same test for the whole block, before its barrier.
  if (static_cast<std::int64_t>(blockIdx.x) * blockDim.x >= task.count) return;
  const std::uint64_t clock = cache_step(task);
  __shared__ unsigned long long counts[3];  // misses, hits, repeats
  if (threadIdx.x < 3) counts[threadIdx.x] = 0;
  __syncthreads();
  unsigned long long mine[3] = {0, 0, 0};
  StepKeys atomics;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < task.count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const Probe p = probe_lookup(task, i, clock, atomics);
    if (p != Probe::outside) ++mine[static_cast<int>(p)];
  }
  for (int k = 0; k < 3; ++k)
    if (mine[k] != 0) atomicAdd(&counts[k], mine[k]);
  __syncthreads();
  // counters: [hits, misses, clock, repeats]
  auto* counters = reinterpret_cast<unsigned long long*>(task.counters);
  if (threadIdx.x == 0 && counts[1] != 0) atomicAdd(counters + 0, counts[1]);
  if (threadIdx.x == 1 && counts[0] != 0) atomicAdd(counters + 1, counts[0]);
  if (threadIdx.x == 2 && counts[2] != 0) atomicAdd(counters + 3, counts[2]);
}

// A warp per lookup: lane 0 keys it and admits it, the warp copies its row.
__global__ void fill(const __grid_constant__ CacheSteps step) {
  const CacheTask& task = step.tasks[blockIdx.y];
  const std::uint64_t clock = cache_step(task);
  const auto claim = [&](std::int64_t way, std::uint64_t seen) {
    return atomicCAS(reinterpret_cast<unsigned long long*>(task.cache.stamps + way), seen, clock) == seen;
  };
  const int lane = static_cast<int>(threadIdx.x % k_warp);
  const WarpBytes bytes{lane};
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / k_warp);
  for (std::int64_t i = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / k_warp; i < task.count;
       i += warps) {
    std::int64_t staging = lane == 0 ? take_miss(task, i) : 0;
    staging = __shfl_sync(k_all_lanes, staging, 0);
    if (staging < 0) continue;
    std::uint8_t* row = task.cache.slot(staging);
    pack_stored_row(task.fetched.rows, task.fetched.keys[i], row, bytes);
    __syncwarp();  // the row in staging, seen by the whole warp
    std::int64_t way = lane == 0 ? admit_miss(task, i, clock, claim) : 0;
    way = __shfl_sync(k_all_lanes, way, 0);
    if (way < 0) continue;
    bytes({task.cache.slot(way), row, task.cache.pitch});
  }
}

}  // namespace

void probe_cache_cuda(std::span<const CacheTask> tasks, cudaStream_t stream) {
  std::int64_t most = 0;
  const CacheSteps step = launch_tasks(tasks, "row cache", most, true);
  if (step.count == 0) return;
  std::int64_t entries = 0;
  for (int d = 0; d < step.count; ++d) entries = std::max(entries, step.tasks[d].cache.step_entries);
  begin_step<<<launch_grid(blocks_for(entries), step), k_threads, 0, stream>>>(step);
  PLESHARD_CUDA_CHECK_LAUNCH();
  if (most == 0) return;
  probe<<<launch_grid(blocks_for(most), step), k_threads, 0, stream>>>(step);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

void fill_cache_cuda(std::span<const CacheTask> tasks, cudaStream_t stream) {
  std::int64_t most = 0;
  const CacheSteps step = launch_tasks(tasks, "row cache", most, true);
  if (most == 0) return;
  fill<<<launch_grid(blocks_for(most * k_warp), step), k_threads, 0, stream>>>(step);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

}  // namespace pleshard::kernels
