#pragma once
// A cache of a table's hot rows in the step space's memory, in front of a slow tier (pinned
// host memory, disk). Rows are kept as stored — packed codes and scales (row_pack.hpp) — so
// a cache of FP8 or NVFP4 rows holds 2-3.5x more rows than one of BF16, and every row is
// decoded by the shared decode core like a table of packed rows.
//
// Slots: a static part, rows chosen ahead (a profile's hottest), found by binary search in
// their sorted ids; then a dynamic part, set-associative (k_cache_ways ways per set), each
// way stamped with the last step that used it and replaced least recently used within its
// set; then one staging row per lookup of a step. A step probes: a hit stamps its way; the
// first miss of a row in the step owns it (a table of the step's missed rows, cleared every
// step, tells) and later lookups of that row in the step repeat it. The slow tier fetches the
// owned misses only; each lands in its owner's staging row, from which this step decodes it
// and its repeats, and is admitted into the least recently used way of its set that no lookup
// of this step uses. Hits of a step therefore never lose their row before the step's decode,
// and the slow tier reads each missed row once per step. One copy of this math for the host
// and the GPU.

#include <cstddef>
#include <cstdint>

#include "kernels/common/host_device.hpp"
#include "kernels/common/ngram_hash.hpp"
#include "kernels/common/row_decode.hpp"
#include "kernels/common/row_pack.hpp"
#include "kernels/common/row_plan.hpp"

namespace pleshard::kernels {

inline constexpr int k_cache_ways = 8;

// Entries of an open-addressing table of up to n keys (a step's missed rows): a power of
// two, at least twice n.
[[nodiscard]] PLESHARD_HD inline std::int64_t open_entries(std::int64_t n) {
  std::int64_t entries = 2;
  while (entries < 2 * n) entries *= 2;
  return entries;
}

// The entry where a search for `key` in a table of `entries` (a power of two) starts; it
// goes on to the next entry, wrapping, until it finds the key or a free entry.
[[nodiscard]] PLESHARD_HD inline std::int64_t first_entry(std::uint64_t key, std::int64_t entries) {
  return static_cast<std::int64_t>(splitmix64(key) & static_cast<std::uint64_t>(entries - 1));
}

struct CacheView {
  std::int64_t first = 0, end = 0;    // the rows the cache stands in front of: [first, end)
  const std::int64_t* hot = nullptr;  // static part: ascending ids, its slots in that order
  std::int64_t hot_count = 0;
  std::int64_t* tags = nullptr;     // dynamic part: [sets][ways] ids, -1 for none
  std::uint64_t* stamps = nullptr;  // and the last step each way was used (0: never; 64 bits: never wraps)
  std::int64_t sets = 0;
  std::uint8_t* slots = nullptr;  // packed rows: hot_count + sets x ways, then staging
  std::size_t pitch = 0;          // bytes of a packed row
  // The step's missed rows: open addressing over `step_entries` (a power of two, at least
  // twice a step's lookups) entries of id + 1 (0: free), and the lookup that owns each.
  std::uint64_t* step_keys = nullptr;
  std::int64_t* step_owners = nullptr;
  std::int64_t step_entries = 0;

  [[nodiscard]] PLESHARD_HD std::int64_t capacity() const { return hot_count + sets * k_cache_ways; }
  [[nodiscard]] PLESHARD_HD std::uint8_t* slot(std::int64_t s) const {
    return slots + static_cast<std::size_t>(s) * pitch;
  }
};

// The set of id's dynamic ways: ids mixed so that runs of nearby ids spread over the sets.
[[nodiscard]] PLESHARD_HD inline std::int64_t cache_set(std::int64_t id, std::int64_t sets) {
  return static_cast<std::int64_t>(splitmix64(static_cast<std::uint64_t>(id)) % static_cast<std::uint64_t>(sets));
}

// The slot holding id, or -1; a dynamic hit stamps its way with `step`.
[[nodiscard]] PLESHARD_HD inline std::int64_t probe_cache(const CacheView& cache, std::int64_t id, std::uint64_t step) {
  const std::int64_t lo = lower_bound_of(cache.hot, cache.hot_count, id);
  if (lo < cache.hot_count && cache.hot[lo] == id) return lo;
  if (cache.sets == 0) return -1;
  const std::int64_t base = cache_set(id, cache.sets) * k_cache_ways;
  for (int w = 0; w < k_cache_ways; ++w)
    if (cache.tags[base + w] == id) {
      cache.stamps[base + w] = step;  // every hit of this step writes the same value
      return cache.hot_count + base + w;
    }
  return -1;
}

// One layer's cache work of a step: `count` lookups `ids`.
struct CacheTask {
  CacheView cache;
  const std::int64_t* ids = nullptr;
  std::int64_t count = 0;
  std::int64_t* keys = nullptr;    // out: each lookup's slot (staging for misses), -1 outside
  std::int64_t* misses = nullptr;  // out of the probe: each lookup's id where it missed, else -1
  // [hits, misses, clock, repeats]: lookups inside [first, end) that hit, missed first in their
  // step and repeated a miss of their step, added to; and the step, advanced in the space
  // before each probe (so that a CUDA graph's replays advance it).
  std::int64_t* counters = nullptr;
  DecodeTask fetched;  // fill: the slow tier's rows of `misses` (keys per lookup)
};

[[nodiscard]] PLESHARD_HD inline std::uint64_t cache_step(const CacheTask& task) {
  return static_cast<std::uint64_t>(task.counters[2]);
}

// Key of a lookup that owns a miss until its row is fetched; below it, a repeat of the miss
// that step entry e owns is keyed k_cache_pending - 1 - e.
inline constexpr std::int64_t k_cache_pending = -2;

enum class Probe { outside = -1, miss = 0, hit = 1, repeat = 2 };

// Probe of lookup i: its key (a slot, pending, a repeat, or -1 outside the cache's rows) and
// its miss. `atomics.swap_key(p, expected, desired)` stores desired at p if it holds expected
// and returns what p held (an atomic compare-and-swap on the GPU).
template <typename Atomics>
PLESHARD_HD Probe probe_lookup(const CacheTask& task, std::int64_t i, std::uint64_t step, Atomics& atomics) {
  const std::int64_t id = task.ids[i];
  task.misses[i] = -1;
  if (id < task.cache.first || id >= task.cache.end) {
    task.keys[i] = -1;
    return Probe::outside;
  }
  const std::int64_t slot = probe_cache(task.cache, id, step);
  if (slot >= 0) {
    task.keys[i] = slot;
    return Probe::hit;
  }
  const CacheView& c = task.cache;
  const auto key = static_cast<std::uint64_t>(id) + 1;
  for (std::int64_t e = first_entry(key, c.step_entries);; e = (e + 1) & (c.step_entries - 1)) {
    const std::uint64_t held = atomics.swap_key(c.step_keys + e, 0, key);
    if (held == 0) {  // the step's first miss of the row
      c.step_owners[e] = i;
      task.keys[i] = k_cache_pending;
      task.misses[i] = id;
      return Probe::miss;
    }
    if (held == key) {
      task.keys[i] = k_cache_pending - 1 - e;
      return Probe::repeat;
    }
  }
}

// Where a miss of `step` may go in its set: the least recently used way no lookup of this
// step has used, or -1. `claim(way, seen)` takes way (stamps it with `step`) if its stamp is
// still `seen`, and says whether it did (an atomic compare-and-swap on the GPU).
template <typename Claim>
PLESHARD_HD std::int64_t claim_way(const CacheView& cache, std::int64_t id, std::uint64_t step, Claim&& claim) {
  if (cache.sets == 0) return -1;
  const std::int64_t base = cache_set(id, cache.sets) * k_cache_ways;
  for (int attempt = 0; attempt < k_cache_ways; ++attempt) {
    std::int64_t victim = -1;
    std::uint64_t oldest = step;
    for (int w = 0; w < k_cache_ways; ++w) {
      // Read again after a claim lost to another miss of the step: not from a stale cache line.
      const std::uint64_t stamp = static_cast<const volatile std::uint64_t*>(cache.stamps)[base + w];
      if (stamp < oldest) {
        oldest = stamp;
        victim = base + w;
      }
    }
    if (victim < 0) return -1;  // every way serves this step
    if (claim(victim, oldest)) return victim;
  }
  return -1;
}

// Fill of lookup i after the fetch, in two parts around the copy of the fetched row into
// its staging row (pack_stored_row of task.fetched, key task.fetched.keys[i]). take_miss: a
// repeat keyed to its owner's staging row; an owned miss keyed to its own, which it
// returns (-1 for any other lookup).
[[nodiscard]] PLESHARD_HD inline std::int64_t take_miss(const CacheTask& task, std::int64_t i) {
  if (task.keys[i] < k_cache_pending) {
    task.keys[i] = task.cache.capacity() + task.cache.step_owners[k_cache_pending - 1 - task.keys[i]];
    return -1;
  }
  if (task.keys[i] != k_cache_pending) return -1;
  task.keys[i] = task.cache.capacity() + i;
  return task.keys[i];
}

// admit_miss: where a way is free of this step, the owned miss i is tagged into it; the
// way's slot, for its staging row to be copied to, or -1.
template <typename Claim>
[[nodiscard]] PLESHARD_HD std::int64_t admit_miss(const CacheTask& task, std::int64_t i, std::uint64_t step,
                                                  Claim&& claim) {
  const std::int64_t id = task.misses[i];
  const std::int64_t way = claim_way(task.cache, id, step, claim);
  if (way < 0) return -1;
  task.cache.tags[way] = id;  // no lookup of this step reads the way: tag before the copy
  return task.cache.hot_count + way;
}

}  // namespace pleshard::kernels
