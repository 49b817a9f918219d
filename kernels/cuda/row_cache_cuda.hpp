#pragma once
// The row cache's steps on the GPU (kernels/common/row_cache.hpp), on a stream: one thread
// per lookup; misses of one step claim their ways with a compare-and-swap on the stamp.

#include <cstdint>
#include <span>

#include <cuda_runtime_api.h>

#include "kernels/common/row_cache.hpp"

namespace pleshard::kernels {

// Every task's step advanced, then its probe: keys, misses and counters (at most
// k_max_step_layers tasks: one launch for their clocks, one for their probes).
void probe_cache_cuda(std::span<const CacheTask> tasks, cudaStream_t stream);
// Every task's fill, once its misses are fetched (ordered after the fetch on `stream`), in
// one launch.
void fill_cache_cuda(std::span<const CacheTask> tasks, cudaStream_t stream);

}  // namespace pleshard::kernels
