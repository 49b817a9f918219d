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

// Threads of the process's host work: the host kernels (a step's hashing and decoding,
// where Kokkos' host space runs on one thread, as Debian's Serial-only Kokkos does), a host
// gather, making synthetic rows, reading checkpoints. The machine's cores unless set; the
// commands and the Python module set the rank's (core/rank_threads.hpp), and 0 goes back
// to the machine's cores.
void set_host_threads(std::size_t threads);
[[nodiscard]] std::size_t host_threads();

}  // namespace pleshard
