#pragma once
// Host kernels on threads of pleshard's own where Kokkos' host space has one (Debian's
// Kokkos is Serial-only): the work cut into blocks, each written by one thread, so the
// output is the same bytes for any number of threads.

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include <Kokkos_Core.hpp>

#include "core/parallel.hpp"

namespace pleshard::kernels {

// Threads a host kernel spreads over itself: 1 where Kokkos' host space has threads (it
// spreads the work, on the count it started with: core/kokkos_runtime.hpp), else the
// process's (host_threads()).
[[nodiscard]] inline std::size_t own_kernel_threads() {
  return Kokkos::DefaultHostExecutionSpace::concurrency() > 1 ? 1 : host_threads();
}

// body(item, first, last) for the blocks [first, last) of at most `block` elements of each
// item's [0, sizes[item]), on up to `threads` threads.
template <typename Body>
void for_each_block(std::span<const std::int64_t> sizes, std::int64_t block, std::size_t threads, const Body& body) {
  struct Block {
    std::size_t item;
    std::int64_t first;
    std::int64_t last;
  };
  std::vector<Block> blocks;
  for (std::size_t item = 0; item < sizes.size(); ++item)
    for (std::int64_t first = 0; first < sizes[item]; first += block)
      blocks.push_back({item, first, std::min(sizes[item], first + block)});
  parallel_for(blocks.size(), threads, 1,
               [&](std::size_t b) { body(blocks[b].item, blocks[b].first, blocks[b].last); });
}

}  // namespace pleshard::kernels
