#include "kernels/cuda/row_cache_cuda.hpp"

#include <algorithm>

#include "kernels/cuda/cuda_check.hpp"

namespace pleshard::kernels {

namespace {

constexpr int k_threads = 256;
constexpr int k_warp = 32;
constexpr unsigned k_all_lanes = 0xffffffffu;

int blocks_for(std::int64_t n) {
  return static_cast<int>(std::clamp<std::int64_t>((n + k_threads - 1) / k_threads, 1, 1 << 16));
}

int warp_blocks_for(std::int64_t n) { return blocks_for(n * k_warp); }

__global__ void advance(std::int64_t* counters) { ++counters[2]; }

struct StepKeys {
  __device__ std::uint64_t swap_key(std::uint64_t* p, std::uint64_t expected, std::uint64_t desired) const {
    return atomicCAS(reinterpret_cast<unsigned long long*>(p), expected, desired);
  }
};

__global__ void probe(CacheTask task) {
  const std::uint64_t step = cache_step(task);
  __shared__ unsigned long long counts[3];  // misses, hits, repeats
  if (threadIdx.x < 3) counts[threadIdx.x] = 0;
  __syncthreads();
  unsigned long long mine[3] = {0, 0, 0};
  StepKeys atomics;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < task.count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const Probe p = probe_lookup(task, i, step, atomics);
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
__global__ void fill(CacheTask task) {
  const std::uint64_t step = cache_step(task);
  const auto claim = [&](std::int64_t way, std::uint64_t seen) {
    return atomicCAS(reinterpret_cast<unsigned long long*>(task.cache.stamps + way), seen, step) == seen;
  };
  const int lane = static_cast<int>(threadIdx.x % k_warp);
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / k_warp);
  for (std::int64_t i = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / k_warp; i < task.count;
       i += warps) {
    std::int64_t staging = lane == 0 ? take_miss(task, i) : 0;
    staging = __shfl_sync(k_all_lanes, staging, 0);
    if (staging < 0) continue;
    std::uint8_t* row = task.cache.slot(staging);
    pack_stored_row(task.fetched.rows, task.fetched.keys[i], row, lane, k_warp);
    __syncwarp();  // the row in staging, seen by the whole warp
    std::int64_t way = lane == 0 ? admit_miss(task, i, step, claim) : 0;
    way = __shfl_sync(k_all_lanes, way, 0);
    if (way < 0) continue;
    std::uint8_t* to = task.cache.slot(way);
    for (std::size_t b = lane; b < task.cache.pitch; b += k_warp) to[b] = row[b];
  }
}

}  // namespace

void probe_cache_cuda(std::span<const CacheTask> tasks, cudaStream_t stream) {
  for (const CacheTask& task : tasks) {
    advance<<<1, 1, 0, stream>>>(task.counters);
    PLESHARD_CUDA_CHECK_LAUNCH();
    PLESHARD_CUDA_CHECK(cudaMemsetAsync(
        task.cache.step_keys, 0, static_cast<std::size_t>(task.cache.step_entries) * sizeof(std::uint64_t), stream));
    if (task.count == 0) continue;
    probe<<<blocks_for(task.count), k_threads, 0, stream>>>(task);
    PLESHARD_CUDA_CHECK_LAUNCH();
  }
}

void fill_cache_cuda(std::span<const CacheTask> tasks, cudaStream_t stream) {
  for (const CacheTask& task : tasks) {
    if (task.count == 0) continue;
    fill<<<warp_blocks_for(task.count), k_threads, 0, stream>>>(task);
    PLESHARD_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace pleshard::kernels
