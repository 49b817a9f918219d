#include "engine/table_stores.hpp"

#include <algorithm>

#include "store/placed_store.hpp"
#include "store/row_store_factory.hpp"

namespace pleshard {

bool TableStores::cached() const {
  return std::any_of(caches.begin(), caches.end(), [](const CachedStore* c) { return c != nullptr; });
}

TableStores make_table_stores(const TableStoreRequest& r) {
  const Placement& placement = r.placement;
  const auto layers = static_cast<std::size_t>(placement.tables());
  TableStores out;
  out.caches.assign(layers, nullptr);
  out.cache_rows.assign(layers, 0);
  // The cache's slots, shared among the tables of cacheable tiers.
  const bool caching = r.cache_rows > 0 || r.cache_bytes > 0;
  if (caching) {
    std::vector<TableLayout> layouts;
    std::vector<RowRange> held(r.ranges.begin(), r.ranges.end());
    for (std::size_t d = 0; d < layers; ++d) {
      layouts.push_back(r.checkpoint.table(static_cast<int>(d)).layout);
      if (!capabilities_of(placement.tier(static_cast<int>(d))).cacheable) held[d] = {0, 0};
    }
    out.cache_rows = cache_rows_per_layer(r.cache_rows, r.cache_bytes, layouts, held);
  }
  const bool profiled = r.profile != nullptr && !r.profile->tables.empty();
  std::vector<std::unique_ptr<RowStore>> parts;
  std::vector<int> holder(layers, -1);
  for (const StorageTier tier : storage_tiers()) {
    if (!placement.uses(tier)) continue;
    const std::vector<RowRange> ranges = ranges_on(placement, tier, r.ranges);
    std::unique_ptr<RowStore> part = make_row_store(tier, r.checkpoint, ranges, r.space, r.reads);
    if (caching && capabilities_of(tier).cacheable) {
      std::vector<LayerCache> caches(layers);
      for (std::size_t d = 0; d < layers; ++d) {
        if (placement.tier(static_cast<int>(d)) != tier) continue;
        caches[d].rows = out.cache_rows[d];
        if (profiled)
          caches[d].hot = hot_rows(r.profile->tables[d], ranges[d],
                                   static_cast<std::int64_t>(r.static_share * static_cast<double>(caches[d].rows)));
      }
      auto cached = std::make_unique<CachedStore>(std::move(part), r.space, std::move(caches));
      for (std::size_t d = 0; d < layers; ++d)
        if (placement.tier(static_cast<int>(d)) == tier) out.caches[d] = cached.get();
      part = std::move(cached);
    }
    for (std::size_t d = 0; d < layers; ++d)
      if (placement.tier(static_cast<int>(d)) == tier) holder[d] = static_cast<int>(parts.size());
    parts.push_back(std::move(part));
  }
  out.store = parts.size() == 1 ? std::move(parts.front())
                                : std::make_unique<PlacedStore>(std::move(parts), std::move(holder), r.space);
  return out;
}

std::uint64_t cache_bytes(const TableStores& stores, std::int64_t max_ids) {
  std::uint64_t bytes = 0;
  std::vector<const CachedStore*> seen;
  for (const CachedStore* cache : stores.caches) {
    if (cache == nullptr || std::find(seen.begin(), seen.end(), cache) != seen.end()) continue;
    seen.push_back(cache);
    bytes += cache->bytes(max_ids);
  }
  return bytes;
}

}  // namespace pleshard
