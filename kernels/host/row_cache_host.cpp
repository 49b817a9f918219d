#include "kernels/host/row_cache_host.hpp"

#include <algorithm>

namespace pleshard::kernels {

void probe_cache_host(std::span<const CacheTask> tasks) {
  struct {
    std::uint64_t swap_key(std::uint64_t* p, std::uint64_t expected, std::uint64_t desired) const {
      const std::uint64_t held = *p;
      if (held == expected) *p = desired;
      return held;
    }
  } atomics;
  for (const CacheTask& task : tasks) {
    const std::uint64_t step = static_cast<std::uint64_t>(++task.counters[2]);
    std::fill_n(task.cache.step_keys, task.cache.step_entries, 0);
    std::int64_t counts[3] = {0, 0, 0};  // misses, hits, repeats
    for (std::int64_t i = 0; i < task.count; ++i) {
      const Probe p = probe_lookup(task, i, step, atomics);
      if (p != Probe::outside) ++counts[static_cast<int>(p)];
    }
    task.counters[0] += counts[1];
    task.counters[1] += counts[0];
    task.counters[3] += counts[2];
  }
}

void fill_cache_host(std::span<const CacheTask> tasks) {
  for (const CacheTask& task : tasks) {
    const std::uint64_t step = cache_step(task);
    const auto claim = [&](std::int64_t way, std::uint64_t seen) {
      if (task.cache.stamps[way] != seen) return false;
      task.cache.stamps[way] = step;
      return true;
    };
    for (std::int64_t i = 0; i < task.count; ++i) {
      const std::int64_t staging = take_miss(task, i);
      if (staging < 0) continue;
      std::uint8_t* row = task.cache.slot(staging);
      pack_stored_row(task.fetched.rows, task.fetched.keys[i], row, HostBytes{});
      const std::int64_t way = admit_miss(task, i, step, claim);
      if (way >= 0) HostBytes{}({task.cache.slot(way), row, task.cache.pitch});
    }
  }
}

}  // namespace pleshard::kernels
