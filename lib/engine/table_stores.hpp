#pragma once
// The row stores of a placement (store/placement.hpp): one store per tier the placement
// uses, each holding its tables' rows on this rank, a row cache in front of those whose tier
// is cacheable where the job asks for one, joined into one store where there are several
// tiers. What the engine's step looks rows up in.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <mpi.h>

#include "ckpt/ple_checkpoint.hpp"
#include "exec/step_space.hpp"
#include "profile/row_profile.hpp"
#include "store/cached_store.hpp"
#include "store/placement.hpp"
#include "store/row_store_factory.hpp"

namespace pleshard {

struct TableStoreRequest {
  const Placement& placement;
  const PleCheckpoint& checkpoint;
  std::span<const RowRange> ranges;  // each table's rows on this rank
  StepSpace& space;
  StoreOptions reads;  // make_row_store's
  // The row cache over the cacheable tables: slots per rank or their bytes (one non-zero;
  // both 0: none), shared among them by rows held; the profile's hottest rows fill
  // `static_share` of each table's slots.
  std::int64_t cache_rows = 0;
  double cache_bytes = 0;
  const RowProfile* profile = nullptr;  // null or empty: every slot dynamic
  double static_share = 0.5;
};

struct TableStores {
  std::unique_ptr<RowStore> store;
  std::vector<CachedStore*> caches;      // per layer: the cache in front of its table, or null
  std::vector<std::int64_t> cache_rows;  // per layer: its cache's slots (0: none)
  [[nodiscard]] bool cached() const;
};

// Each tier's store, loading its tables' rows now (a cache's static part is filled by the
// store's reserve()).
[[nodiscard]] TableStores make_table_stores(const TableStoreRequest& request);

// The bytes every cache of `stores` and its staging take for steps of `max_ids` ids.
[[nodiscard]] std::uint64_t cache_bytes(const TableStores& stores, std::int64_t max_ids);

}  // namespace pleshard
