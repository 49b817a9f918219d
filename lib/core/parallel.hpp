#pragma once
// Independent pieces of host work on several threads: body(i) for every i in [0, count),
// taken in order by up to `max_threads` threads (one when there are few pieces): the caller
// and helpers from threads the process keeps for such loops, started only where more are
// wanted at once than ever before. The first failure stops the rest and is rethrown on the
// calling thread.

#include <cstddef>
#include <functional>
#include <thread>

namespace pleshard {

void parallel_for(std::size_t count, std::size_t max_threads, std::size_t min_per_thread,
                  const std::function<void(std::size_t)>& body);
// The threads kept for parallel_for's helpers so far.
[[nodiscard]] std::size_t helper_threads();

// The machine's cores (at least one).
[[nodiscard]] inline std::size_t host_cores() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

// Threads for bulk host work (making synthetic rows): the machine's cores unless set, for
// the process (ckpt make --threads; 0 goes back to all cores).
void set_host_threads(std::size_t threads);
[[nodiscard]] std::size_t host_threads();

// Threads the host kernels (a step's hashing and decoding) spread their work over where
// Kokkos' host space runs on one thread (Debian's Kokkos is Serial-only): --kokkos-threads,
// for the process; 1 (one core per rank) unless set, and 0 counts as 1.
void set_kernel_threads(std::size_t threads);
[[nodiscard]] std::size_t kernel_threads();

}  // namespace pleshard
