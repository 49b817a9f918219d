#pragma once
// The row cache's steps on the host (kernels/common/row_cache.hpp), in lookup order: the
// host's cache is what the GPU's is, admitted without races.

#include <cstdint>
#include <span>

#include "kernels/common/row_cache.hpp"

namespace pleshard::kernels {

// Every task's step advanced, then its probe: keys, misses and counters.
void probe_cache_host(std::span<const CacheTask> tasks);
// Every task's fill, once its misses are fetched.
void fill_cache_host(std::span<const CacheTask> tasks);

}  // namespace pleshard::kernels
