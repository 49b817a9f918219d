#pragma once
// Independent pieces of host work on several threads: body(i) for every i in [0, count),
// taken in order by up to `max_threads` threads (one when there are few pieces). The first
// failure stops the rest and is rethrown on the calling thread.

#include <cstddef>
#include <functional>
#include <thread>

namespace pleshard {

void parallel_for(std::size_t count, std::size_t max_threads, std::size_t min_per_thread,
                  const std::function<void(std::size_t)>& body);

// The machine's cores (at least one).
[[nodiscard]] inline std::size_t host_cores() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

// Threads for bulk host work (making synthetic rows): the machine's cores unless set, for
// the process (ckpt make --threads; 0 goes back to all cores).
void set_host_threads(std::size_t threads);
[[nodiscard]] std::size_t host_threads();

}  // namespace pleshard
