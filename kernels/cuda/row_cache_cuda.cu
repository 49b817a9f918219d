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

__global__ void fill(CacheTask task) {
  const std::uint64_t step = cache_step(task);
  const auto claim = [&](std::int64_t way, std::uint64_t seen) {
    return atomicCAS(reinterpret_cast<unsigned long long*>(task.cache.stamps + way), seen, step) == seen;
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
    fill<<<blocks_for(task.count), k_threads, 0, stream>>>(task);
    PLESHARD_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace pleshard::kernels
