#include "profile/miss_curve.hpp"

#include <algorithm>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "hash/ngram_ids.hpp"
#include "kernels/host/row_cache_host.hpp"
#include "model/table_spec.hpp"
#include "profile/profile_job.hpp"

namespace pleshard {

namespace {

// The share of `ids` (in steps of `step` ids) that a cache of `slots` slots, `hot` of them
// static, serves without a read of the slow tier: the cache's host kernels over rows of no
// bytes.
double simulate(const std::vector<std::int64_t>& ids, std::int64_t table_rows, std::int64_t step,
                std::vector<std::int64_t> hot, std::int64_t slots) {
  std::sort(hot.begin(), hot.end());
  const std::int64_t sets = (slots - static_cast<std::int64_t>(hot.size())) / kernels::k_cache_ways;
  std::vector<std::int64_t> tags(static_cast<std::size_t>(sets * kernels::k_cache_ways), -1);
  std::vector<std::uint64_t> stamps(tags.size(), 0);
  std::vector<std::int64_t> keys(static_cast<std::size_t>(step)), misses(keys.size());
  const std::int64_t entries = kernels::open_entries(step);
  std::vector<std::uint64_t> step_keys(static_cast<std::size_t>(entries));
  std::vector<std::int64_t> step_owners(step_keys.size());
  std::int64_t counters[4] = {0, 0, 0, 0};
  std::uint8_t no_bytes = 0;
  const kernels::CacheView view{0,
                                table_rows,
                                hot.data(),
                                static_cast<std::int64_t>(hot.size()),
                                tags.data(),
                                stamps.data(),
                                sets,
                                &no_bytes,
                                0,
                                step_keys.data(),
                                step_owners.data(),
                                entries};
  // Rows of no bytes: bf16 of head_dim 0 (nothing is copied).
  const kernels::TableView table{RowFormat::bf16, 0, 0, table_rows, &no_bytes, nullptr, 1.0f, 0, 0};
  for (std::size_t at = 0; at < ids.size(); at += static_cast<std::size_t>(step)) {
    const auto n = static_cast<std::int64_t>(std::min<std::size_t>(static_cast<std::size_t>(step), ids.size() - at));
    kernels::CacheTask task{view, ids.data() + at, n, keys.data(), misses.data(), counters, {}};
    kernels::probe_cache_host({&task, 1});
    task.fetched = {table, misses.data(), n, nullptr};
    kernels::fill_cache_host({&task, 1});
  }
  // Served without a read of the slow tier: hits, and repeats of a miss in its step.
  const std::int64_t lookups = counters[0] + counters[1] + counters[3];
  return lookups > 0 ? static_cast<double>(counters[0] + counters[3]) / static_cast<double>(lookups) : 0;
}

// Belady's hits with `slots` rows over `ids` (each step's distinct rows, in the order first
// looked up): `next[i]` is where ids[i]'s row is looked up again (ids.size() for never).
std::int64_t belady_hits(const std::vector<std::int64_t>& ids, const std::vector<std::size_t>& next,
                         std::int64_t slots) {
  if (slots <= 0 || ids.empty()) return 0;
  std::unordered_map<std::int64_t, std::size_t> cached;                // row -> its next lookup
  std::priority_queue<std::pair<std::size_t, std::int64_t>> farthest;  // (next lookup, row), stale entries too
  std::int64_t hits = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::int64_t id = ids[i];
    if (const auto it = cached.find(id); it != cached.end()) {
      ++hits;
      it->second = next[i];
      farthest.emplace(next[i], id);
      continue;
    }
    if (next[i] == ids.size()) continue;  // never again: not worth a slot
    if (static_cast<std::int64_t>(cached.size()) < slots) {
      cached.emplace(id, next[i]);
      farthest.emplace(next[i], id);
      continue;
    }
    for (;;) {  // the cached row needed farthest ahead
      const auto& [when, row] = farthest.top();
      const auto it = cached.find(row);
      if (it != cached.end() && it->second == when) break;
      farthest.pop();
    }
    if (farthest.top().first <= next[i]) continue;  // every cached row is needed sooner
    cached.erase(farthest.top().second);
    farthest.pop();
    cached.emplace(id, next[i]);
    farthest.emplace(next[i], id);
  }
  return hits;
}

std::vector<std::int64_t> hottest(const TableProfile* profile, std::int64_t n) {
  if (profile == nullptr) return {};
  const auto k =
      static_cast<std::size_t>(std::clamp<std::int64_t>(n, 0, static_cast<std::int64_t>(profile->rows.size())));
  return {profile->rows.begin(), profile->rows.begin() + static_cast<std::ptrdiff_t>(k)};
}

}  // namespace

std::vector<CurvePoint> miss_ratio_curve(const ModelConfig& config, const PleCheckpoint& checkpoint,
                                         const std::vector<Request>& requests, int ple_index,
                                         const TableProfile* profile, const CurveOptions& options) {
  const PleTableInfo& info = checkpoint.table(ple_index);
  const TableSpec spec = hashing_spec(derive_table_spec(config, ple_index), info, checkpoint.path(), false);
  const std::int64_t table_rows = info.layout.rows;
  std::vector<std::int64_t> ids;
  for_each_request_batch(config, requests, std::int64_t{1} << 20, [&](const TokenBatch& batch) {
    for (const std::int64_t id : compute_ngram_ids(spec, batch))
      if (id >= 0 && id < table_rows) ids.push_back(id);
  });
  const std::int64_t step = std::max<std::int64_t>(1, options.step_tokens * spec.total_heads());
  std::vector<bool> repeat(ids.size());  // whether a lookup's row was looked up earlier in the stream
  {
    std::unordered_set<std::int64_t> seen;
    for (std::size_t i = 0; i < ids.size(); ++i) repeat[i] = !seen.insert(ids[i]).second;
  }
  // Belady's sees what the slow tier would: each step's distinct rows (a step's repeats of
  // its misses are served by its one read, as in the cache), and where each comes again.
  std::vector<std::int64_t> distinct;
  std::int64_t step_repeats = 0;
  for (std::size_t at = 0; at < ids.size(); at += static_cast<std::size_t>(step)) {
    std::unordered_set<std::int64_t> in_step;
    for (std::size_t i = at; i < std::min(ids.size(), at + static_cast<std::size_t>(step)); ++i)
      if (in_step.insert(ids[i]).second) {
        distinct.push_back(ids[i]);
      } else {
        ++step_repeats;
      }
  }
  std::vector<std::size_t> next(distinct.size());
  {
    std::unordered_map<std::int64_t, std::size_t> later;
    for (std::size_t i = distinct.size(); i-- > 0;) {
      const auto [it, first] = later.try_emplace(distinct[i], distinct.size());
      next[i] = it->second;
      it->second = i;
    }
  }
  const auto share = [&](std::int64_t served) {
    return ids.empty() ? 0.0 : static_cast<double>(served) / static_cast<double>(ids.size());
  };
  std::vector<CurvePoint> out;
  for (const std::int64_t slots : options.slots) {
    CurvePoint p;
    p.slots = slots;
    const std::vector<std::int64_t> hot = hottest(profile, slots);
    const std::unordered_set<std::int64_t> hot_set(hot.begin(), hot.end());
    std::int64_t best = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) best += repeat[i] || hot_set.count(ids[i]) != 0;
    p.bound = ids.empty() ? 0 : static_cast<double>(best) / static_cast<double>(ids.size());
    p.optimal = share(belady_hits(distinct, next, slots) + step_repeats);
    p.dynamic = simulate(ids, table_rows, step, {}, slots);
    if (profile != nullptr) {
      p.fixed = simulate(ids, table_rows, step, hot, slots);
      p.mixed = simulate(ids, table_rows, step,
                         hottest(profile, static_cast<std::int64_t>(options.static_share * static_cast<double>(slots))),
                         slots);
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace pleshard
