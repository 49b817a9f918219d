#pragma once
// `--placement auto`: each table on the fastest tier with room for it, as a pure function of
// what a rank has (so it is tested with given capacities). The tiers are tried in their
// order, the fastest first, among those that decode where the step runs (on a machine with
// a GPU: device, pinned, disk; without: host, disk) and, for a checkpoint without files, do
// not read files; a tier has room when each kind of memory its demand names has that much
// left. The tables go in the order a step needs them: the table read at the earliest decoder
// layer first, because a slow tier's reads for a table can hide only behind the decoder
// layers that run before it, and the table read first has the fewest (DeepSeek-V4.1's
// layer-1 table gets the GPU before its layer-14 one, however hot that is). Among tables read
// at the same layer the hottest first: the one with the most lookups per byte it keeps on
// the fastest tier, which a profile measures and the heads per table estimate otherwise. The
// GPU memory the tables leave becomes the row cache in front of the tables on cacheable tiers.
// Tiers are told apart by their descriptors (store/tier_descriptor.hpp), never their names.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "store/memory_kind.hpp"
#include "store/placement.hpp"

namespace pleshard {

// What one table takes on one tier: bytes of each kind of memory (its descriptor's demand).
struct TierDemand {
  StorageTier tier = StorageTier::host;
  std::vector<MemoryUse> memory;
  [[nodiscard]] std::uint64_t bytes() const;  // over every kind
};

// What one table asks of the tiers on one rank.
struct TableDemand {
  std::vector<TierDemand> tiers;  // each tier it may go to (table_demands: every registered one)
  double lookups = 1;             // per step, relative to the other tables
  int read_at_layer = 0;          // its deadline: the 0-based decoder layer that reads it (TableSpec)
  // Its demand on `tier`; null where it may not go there.
  [[nodiscard]] const TierDemand* on(StorageTier tier) const;
  [[nodiscard]] std::uint64_t bytes_on(StorageTier tier) const;  // 0 where it may not go there
};

// What one rank may use, margins already taken.
struct PlacementCapacity {
  bool gpu = false;                // tiers that decode on the GPU (a GPU and a CUDA build)
  bool files = true;               // the tables are in files (the tiers that read files may)
  std::uint64_t device_bytes = 0;  // GPU memory for tables and the row cache
  std::uint64_t host_bytes = 0;    // host memory for tables
  [[nodiscard]] std::uint64_t bytes(MemoryKind kind) const {
    return kind == MemoryKind::gpu ? device_bytes : host_bytes;
  }
};

struct PlacementPlan {
  Placement placement;
  std::vector<std::string> why;   // per table: why its tier, and its place in the order
  std::uint64_t device_left = 0;  // GPU memory the tables leave
  std::uint64_t host_left = 0;
  // GPU memory for the row cache in front of the tables on cacheable tiers: what the tables
  // leave where any table is on one (pinned, disk), else 0.
  std::uint64_t cache_bytes = 0;
  // One line per table: "table 0: device, 51.2 GB (why)".
  [[nodiscard]] std::vector<std::string> lines(std::span<const TableDemand> tables) const;
};

// InputError naming what is short when a table fits nowhere.
[[nodiscard]] PlacementPlan plan_placement(std::span<const TableDemand> tables, const PlacementCapacity& capacity);

}  // namespace pleshard
