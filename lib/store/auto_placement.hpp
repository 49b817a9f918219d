#pragma once
// `--placement auto`: each table on the fastest tier with room for it, as a pure function of
// what a rank has (so it is tested with given capacities). Tables go to the device first,
// then pinned host memory, then the disk (on a machine without a GPU: host memory, then the
// disk), in the order a step needs them: the table read at the earliest decoder layer first,
// because a slow tier's reads for a table can hide only behind the decoder layers that run
// before it, and the table read first has the fewest (DeepSeek-V4.1's layer-1 table gets the
// GPU before its layer-14 one, however hot that is). Among tables read at the same layer
// the hottest first: the one with the most lookups per byte it keeps, which a profile
// measures and the heads per table estimate otherwise. The GPU memory the device tables
// leave becomes the row cache in front of the tables that are not on the device.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "store/placement.hpp"

namespace pleshard {

// What one table asks of each tier on one rank.
struct TableDemand {
  std::uint64_t gpu_bytes = 0;   // device or pinned: its rows as the GPU tiers keep them
  std::uint64_t host_bytes = 0;  // host tier
  std::uint64_t disk_bytes = 0;  // disk tier: the block scales it keeps in host memory
  double lookups = 1;            // per step, relative to the other tables
  int read_at_layer = 0;         // its deadline: the 0-based decoder layer that reads it (TableSpec)
};

// What one rank may use, margins already taken.
struct PlacementCapacity {
  bool gpu = false;                // device and pinned tiers (a GPU and a CUDA build)
  bool files = true;               // the tables are in files (the disk tier reads them)
  std::uint64_t device_bytes = 0;  // GPU memory for tables and the row cache
  std::uint64_t host_bytes = 0;    // host memory for pinned, host and disk tables
};

struct PlacementPlan {
  Placement placement;
  std::vector<std::string> why;   // per table: why its tier, and its place in the order
  std::uint64_t device_left = 0;  // GPU memory the tables leave
  std::uint64_t host_left = 0;
  // GPU memory for the row cache in front of the tables not on the device: what the
  // tables leave where any table is on the pinned or disk tier, else 0.
  std::uint64_t cache_bytes = 0;
  // One line per table: "table 0: device, 51.2 GB (why)".
  [[nodiscard]] std::vector<std::string> lines(std::span<const TableDemand> tables) const;
};

// InputError naming what is short when a table fits nowhere.
[[nodiscard]] PlacementPlan plan_placement(std::span<const TableDemand> tables, const PlacementCapacity& capacity);

}  // namespace pleshard
