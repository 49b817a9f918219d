#include "kernels/host/row_cache_host.hpp"

namespace pleshard::kernels {

void probe_cache_host(std::span<const CacheTask> tasks) {
  for (const CacheTask& task : tasks) {
    const std::uint32_t step = static_cast<std::uint32_t>(++task.counters[2]);
    std::int64_t hits = 0, misses = 0;
    for (std::int64_t i = 0; i < task.count; ++i) {
      const int hit = probe_lookup(task, i, step);
      hits += hit == 1;
      misses += hit == 0;
    }
    task.counters[0] += hits;
    task.counters[1] += misses;
  }
}

void fill_cache_host(std::span<const CacheTask> tasks) {
  for (const CacheTask& task : tasks) {
    const std::uint32_t step = cache_step(task);
    const auto claim = [&](std::int64_t way, std::uint32_t seen) {
      if (task.cache.stamps[way] != seen) return false;
      task.cache.stamps[way] = step;
      return true;
    };
    for (std::int64_t i = 0; i < task.count; ++i) fill_lookup(task, i, step, claim);
  }
}

}  // namespace pleshard::kernels
