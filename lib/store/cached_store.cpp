#include "store/cached_store.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "exec/step_kernels.hpp"
#include "kernels/common/row_pack.hpp"

namespace pleshard {

namespace {

std::size_t pitch_of(const TableLayout& layout) { return kernels::packed_row_bytes(layout.format, layout.head_dim); }

constexpr std::size_t k_counters = 4;  // kernels::CacheTask::counters

}  // namespace

std::vector<std::int64_t> cache_rows_per_layer(std::int64_t rows, double bytes, std::span<const TableLayout> layouts,
                                               std::span<const RowRange> ranges) {
  if (rows < 0 || bytes < 0 || (rows > 0 && bytes > 0))
    throw InputError("a cache is sized by rows or by bytes, not both, and not negative");
  double total = 0;
  for (const RowRange& r : ranges) total += static_cast<double>(r.size());
  std::vector<std::int64_t> out;
  for (std::size_t d = 0; d < layouts.size(); ++d) {
    const double share = total > 0 ? static_cast<double>(ranges[d].size()) / total : 0;
    const double slots =
        rows > 0 ? static_cast<double>(rows) * share : bytes * share / static_cast<double>(pitch_of(layouts[d]));
    // No more slots than the rows the tier holds: past that a cache only takes memory.
    out.push_back(static_cast<std::int64_t>(std::min(std::floor(slots), static_cast<double>(ranges[d].size()))));
  }
  return out;
}

std::uint64_t CachedStore::bytes(std::int64_t max_ids) const {
  const auto ids = static_cast<std::uint64_t>(max_ids);
  const auto step_entries = static_cast<std::uint64_t>(kernels::open_entries(max_ids));
  std::uint64_t bytes = 0;
  for (std::size_t d = 0; d < layers_.size(); ++d) {
    const LayerCache& plan = layers_[d].plan;
    const auto rows = static_cast<std::uint64_t>(plan.rows);
    const auto hot = static_cast<std::uint64_t>(plan.hot.size());
    bytes += (rows + ids) * pitch_of(layouts_[d]) + (rows - hot) * (sizeof(std::int64_t) + sizeof(std::uint64_t)) +
             hot * sizeof(std::int64_t) + ids * 2 * sizeof(std::int64_t) +
             step_entries * (sizeof(std::uint64_t) + sizeof(std::int64_t)) + k_counters * sizeof(std::int64_t);
  }
  return bytes;
}

CachedStore::CachedStore(std::unique_ptr<RowStore> backing, StepSpace& space, std::vector<LayerCache> layers)
    : backing_(std::move(backing)), space_(space) {
  if (layers.size() != static_cast<std::size_t>(backing_->layers()))
    throw SystemError("CachedStore: one cache per layer");
  for (int d = 0; d < backing_->layers(); ++d) {
    LayerCache& plan = layers[static_cast<std::size_t>(d)];
    const RowRange range = backing_->range(d);
    if (plan.rows < 0 || static_cast<std::int64_t>(plan.hot.size()) > plan.rows)
      throw SystemError("CachedStore: layer " + std::to_string(d) + ": more hot rows than slots");
    if (!std::is_sorted(plan.hot.begin(), plan.hot.end()) ||
        std::adjacent_find(plan.hot.begin(), plan.hot.end()) != plan.hot.end() ||
        (!plan.hot.empty() && (plan.hot.front() < range.begin || plan.hot.back() >= range.end)))
      throw SystemError("CachedStore: layer " + std::to_string(d) + ": hot rows not ascending, distinct and in range");
    layouts_.push_back(backing_->layout(d));
    ranges_.push_back(range);
    Layer& l = layers_.emplace_back(space_);
    l.sets = (plan.rows - static_cast<std::int64_t>(plan.hot.size())) / kernels::k_cache_ways;
    l.plan = std::move(plan);
  }
  tasks_.resize(layers_.size());
  missed_.resize(layers_.size());
  out_.resize(layers_.size());
}

kernels::CacheView CachedStore::view(std::size_t d) const {
  const Layer& l = layers_[d];
  return {ranges_[d].begin,
          ranges_[d].end,
          l.hot.as<std::int64_t>(),
          static_cast<std::int64_t>(l.plan.hot.size()),
          l.tags.as<std::int64_t>(),
          l.stamps.as<std::uint64_t>(),
          l.sets,
          l.slots.data(),
          pitch_of(layouts_[d]),
          l.step_keys.as<std::uint64_t>(),
          l.step_owners.as<std::int64_t>(),
          l.step_entries};
}

void CachedStore::set_fetching_ahead(bool on) {
  backing_->set_fetching_ahead(on);
  ahead_ = on && fetches_ahead();
}

std::uint64_t CachedStore::step_buffer_bytes(std::int64_t max_ids) const {
  const std::uint64_t keys = ahead_ ? layers_.size() * static_cast<std::uint64_t>(max_ids) * sizeof(std::int64_t) : 0;
  return backing_->step_buffer_bytes(max_ids) + keys;
}

void CachedStore::reserve(std::int64_t max_ids) {
  backing_->reserve(max_ids);
  if (max_ids <= max_ids_) return;
  max_ids_ = max_ids;
  // Made whole again: growing the slots loses them; the static part is filled below.
  for (std::size_t d = 0; d < layers_.size(); ++d) {
    Layer& l = layers_[d];
    const auto ids = static_cast<std::size_t>(max_ids);
    const auto ways = static_cast<std::size_t>(l.sets * kernels::k_cache_ways);
    l.hot.assign(std::span<const std::int64_t>(l.plan.hot));
    l.tags.assign(std::span<const std::int64_t>(std::vector<std::int64_t>(ways, -1)));
    l.stamps.reserve(std::max<std::size_t>(1, ways * sizeof(std::uint64_t)));
    space_.fill_zero(l.stamps.data(), ways * sizeof(std::uint64_t));
    if (l.counters.capacity() == 0) {
      l.counters.reserve(k_counters * sizeof(std::int64_t));
      space_.fill_zero(l.counters.data(), k_counters * sizeof(std::int64_t));
    }
    l.step_entries = kernels::open_entries(max_ids);
    l.step_keys.reserve(static_cast<std::size_t>(l.step_entries) * sizeof(std::uint64_t));
    l.step_owners.reserve(static_cast<std::size_t>(l.step_entries) * sizeof(std::int64_t));
    l.slots.reserve((l.plan.hot.size() + ways + ids) * pitch_of(layouts_[d]));
    for (int turn = 0; turn < (ahead_ ? 2 : 1); ++turn) l.keys[turn].reserve(ids * sizeof(std::int64_t));
    l.misses.reserve(ids * sizeof(std::int64_t));
  }
  fill_static(max_ids);
}

void CachedStore::fill_static(std::int64_t max_ids) {
  std::int64_t most = 0;
  for (const Layer& l : layers_) most = std::max(most, static_cast<std::int64_t>(l.plan.hot.size()));
  std::vector<RowQuery> queries(layers_.size());
  std::vector<kernels::PackTask> packs(layers_.size());
  for (std::int64_t at = 0; at < most; at += max_ids) {
    for (std::size_t d = 0; d < layers_.size(); ++d) {
      const auto hot = static_cast<std::int64_t>(layers_[d].plan.hot.size());
      const std::int64_t n = std::clamp<std::int64_t>(hot - at, 0, max_ids);
      queries[d] = {layers_[d].hot.as<std::int64_t>() + std::min(at, hot), n, true};
    }
    backing_->submit(queries);
    const std::span<const kernels::DecodeTask> fetched = backing_->wait();
    for (std::size_t d = 0; d < layers_.size(); ++d)
      packs[d] = {fetched[d].rows, fetched[d].keys, queries[d].count,
                  layers_[d].slots.data() + static_cast<std::size_t>(at) * pitch_of(layouts_[d])};
    pack_rows_step(space_, packs);
    space_.synchronize();  // the next chunk's fetch reuses the slow tier's staging
  }
}

void CachedStore::submit(std::span<const RowQuery> queries) {
  check_queries(queries);
  if (max_ids_ == 0) throw SystemError("CachedStore: submit before reserve");
  // The step before's keys stay in the other set until its decode (fetching ahead).
  if (ahead_) turn_ ^= 1;
  for (std::size_t d = 0; d < layers_.size(); ++d) {
    const RowQuery& q = queries[d];
    if (q.count > max_ids_)
      throw SystemError("CachedStore: " + std::to_string(q.count) + " ids; reserved for " + std::to_string(max_ids_));
    Layer& l = layers_[d];
    tasks_[d] = {view(d),
                 q.ids,
                 q.count,
                 l.keys[turn_].as<std::int64_t>(),
                 l.misses.as<std::int64_t>(),
                 l.counters.as<std::int64_t>(),
                 {}};
    // The step's table of misses sized for its lookups (within the one reserved): clearing
    // it each step then costs what the step does, not the largest step's.
    tasks_[d].cache.step_entries = kernels::open_entries(q.count);
    missed_[d] = {l.misses.as<std::int64_t>(), q.count};
  }
  probe_cache_step(space_, tasks_);
  backing_->submit(missed_);
}

std::span<const kernels::DecodeTask> CachedStore::wait() {
  const std::span<const kernels::DecodeTask> fetched = backing_->wait();
  for (std::size_t d = 0; d < layers_.size(); ++d) tasks_[d].fetched = fetched[d];
  fill_cache_step(space_, tasks_);
  for (std::size_t d = 0; d < layers_.size(); ++d) {
    const kernels::CacheTask& t = tasks_[d];
    out_[d] = {kernels::packed_rows_view(fetched[d].rows, t.cache.slots, t.cache.capacity() + t.count), t.keys, t.count,
               nullptr};
  }
  return out_;
}

CacheCounts CachedStore::counts(int layer) const {
  const std::vector<std::int64_t> c =
      layers_.at(static_cast<std::size_t>(layer)).counters.to_host<std::int64_t>(k_counters);
  return {c[0], c[1], c[3]};
}

std::int64_t CachedStore::static_rows(int layer) const {
  return static_cast<std::int64_t>(layers_.at(static_cast<std::size_t>(layer)).plan.hot.size());
}

std::int64_t CachedStore::dynamic_rows(int layer) const {
  return layers_.at(static_cast<std::size_t>(layer)).sets * kernels::k_cache_ways;
}

}  // namespace pleshard
