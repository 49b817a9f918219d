#pragma once
// A storage tier as one descriptor: its name, its place among the tiers, where its lookups
// decode, what it can do, what its tables take in memory, what it reads when it loads, and
// the row store that holds its tables. Every question about a tier — parsing its name, the
// automatic placement, the memory checks, making its stores — asks the registry here, so a
// tier is one file: the built-ins in store/tiers/ (listed once, in tier_registry.cpp), and
// any other registered with register_tier(), from a test or a program's own code.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "exec/step_space.hpp"
#include "format/row_format.hpp"
#include "store/memory_kind.hpp"
#include "store/row_range.hpp"
#include "store/row_store.hpp"
#include "store/storage_tier.hpp"
#include "store/store_options.hpp"

namespace pleshard {

struct TierDescriptor {
  std::string name;  // as --storage and --placement name it
  // Where it keeps its rows, in a few words for `--help` ("GPU memory"); empty: its name alone.
  std::string help;
  // Its place among the tiers, the fastest (lowest) first: the automatic placement tries
  // them in this order.
  int speed_order = 0;
  DecodesOn decodes = DecodesOn::host;  // where its lookups decode (gpu: refused without one)
  TierCapabilities capabilities;
  // What it keeps in memory for rows ranges[d] of tables layouts[d]: the same kinds, in the
  // same order, whatever the ranges (so every rank checks the same kinds collectively).
  std::function<std::vector<MemoryUse>(std::span<const TableLayout> layouts, std::span<const RowRange> ranges)> memory;
  // Its loading rule: the bytes of the checkpoint's files it reads when it loads those rows
  // (how: capabilities.loads_collectively, and whole_tables for which rows).
  std::function<std::uint64_t(std::span<const TableLayout> layouts, std::span<const RowRange> ranges)> load_bytes;
  // What to change when its tables do not fit the memory (a message's end: "use more nodes,
  // or --storage disk").
  std::function<std::string()> memory_remedy;
  // Its tables' store: rows ranges[d] of table d (the tables not on it have empty ranges),
  // in `space`; `tier` is its own id. The checkpoint outlives the store.
  std::function<std::unique_ptr<RowStore>(StorageTier tier, const PleCheckpoint& checkpoint,
                                          std::span<const RowRange> ranges, StepSpace& space,
                                          const StoreOptions& options)>
      make_store;
};

// Adds a tier; its id from now on names it everywhere a built-in tier's does. SystemError
// where the name is taken or a function is missing. Not thread-safe: register before any
// engine is made.
StorageTier register_tier(TierDescriptor descriptor);

// The descriptor of a registered tier; SystemError for an id no tier has.
[[nodiscard]] const TierDescriptor& tier_descriptor(StorageTier tier);

// The tier of that name, if one is registered.
[[nodiscard]] std::optional<StorageTier> find_tier(std::string_view name);

}  // namespace pleshard
