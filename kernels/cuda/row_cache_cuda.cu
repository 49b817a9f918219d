#include "kernels/cuda/row_cache_cuda.hpp"

#include <algorithm>

#include "kernels/cuda/cuda_check.hpp"

namespace pleshard::kernels {

namespace {

constexpr int k_threads = 256;

int blocks_for(std::int64_t n) {
  return static_cast<int>(std::clamp<std::int64_t>((n + k_threads - 1) / k_threads, 1, 1 << 16));
}

__global__ void advance(std::int64_t* counters) { ++counters[2]; }

__global__ void probe(CacheTask task) {
  const std::uint32_t step = cache_step(task);
  __shared__ unsigned long long counts[2];
  if (threadIdx.x < 2) counts[threadIdx.x] = 0;
  __syncthreads();
  unsigned long long hits = 0, misses = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < task.count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const int hit = probe_lookup(task, i, step);
    hits += hit == 1;
    misses += hit == 0;
  }
  if (hits != 0) atomicAdd(&counts[0], hits);
  if (misses != 0) atomicAdd(&counts[1], misses);
  __syncthreads();
  if (threadIdx.x < 2 && counts[threadIdx.x] != 0)
    atomicAdd(reinterpret_cast<unsigned long long*>(task.counters) + threadIdx.x, counts[threadIdx.x]);
}

__global__ void fill(CacheTask task) {
  const std::uint32_t step = cache_step(task);
  const auto claim = [&](std::int64_t way, std::uint32_t seen) {
    return atomicCAS(task.cache.stamps + way, seen, step) == seen;
  };
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < task.count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    fill_lookup(task, i, step, claim);
}

}  // namespace

void probe_cache_cuda(std::span<const CacheTask> tasks, cudaStream_t stream) {
  for (const CacheTask& task : tasks) {
    advance<<<1, 1, 0, stream>>>(task.counters);
    PLESHARD_CUDA_CHECK_LAUNCH();
    if (task.count == 0) continue;
    probe<<<blocks_for(task.count), k_threads, 0, stream>>>(task);
    PLESHARD_CUDA_CHECK_LAUNCH();
  }
}

void fill_cache_cuda(std::span<const CacheTask> tasks, cudaStream_t stream) {
  for (const CacheTask& task : tasks) {
    if (task.count == 0) continue;
    fill<<<blocks_for(task.count), k_threads, 0, stream>>>(task);
    PLESHARD_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace pleshard::kernels
