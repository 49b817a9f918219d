#pragma once
// Where each table of a job lives: one storage tier per table (`--placement 0=device,1=pinned`)
// or every table on one (`--storage T`). A step still looks every table up at once and
// decodes them all in one launch, so the tiers of one placement share the step's space: the
// GPU (device, pinned and disk tables) or the host (host and disk tables).

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/row_range.hpp"
#include "store/storage_tier.hpp"

namespace pleshard {

struct Placement {
  std::vector<StorageTier> tiers;  // per table, in table (ple index) order

  [[nodiscard]] static Placement every(StorageTier tier, int tables) {
    return {std::vector<StorageTier>(static_cast<std::size_t>(tables), tier)};
  }
  [[nodiscard]] int tables() const { return static_cast<int>(tiers.size()); }
  [[nodiscard]] StorageTier tier(int table) const { return tiers.at(static_cast<std::size_t>(table)); }
  [[nodiscard]] bool uniform() const;
  [[nodiscard]] bool uses(StorageTier tier) const;
  // Whether a table's tier decodes `where` (store/tier_descriptor.hpp).
  [[nodiscard]] bool decodes_on(DecodesOn where) const;
  // Whether the step runs on the GPU: a table on a tier that decodes there (device, pinned),
  // or every table on tiers that decode where the step runs (disk) where there is a GPU.
  [[nodiscard]] bool uses_gpu() const;
  // The tiers' capabilities combined: what every table's tier does (whole_tables,
  // graph_capturable, loads_collectively), or any table's (cacheable, reads_files, in_host_memory). Disk
  // tables beside tables of another tier hold their rank's rows only, as those do.
  [[nodiscard]] TierCapabilities capabilities() const;
  // "device" where every table is on one tier, else "0=device,1=pinned".
  [[nodiscard]] std::string describe() const;
  // The tier where every table is on one, else "mixed" (the report's `storage`).
  [[nodiscard]] std::string storage() const { return uniform() ? describe() : "mixed"; }
};

// `--placement`: "D=TIER,..." naming each of `tables` tables once (D its ple index), or one
// tier for every table; InputError naming the option and what is wrong, also where the
// tiers cannot share one step (a tier that decodes on the host beside one that decodes on the
// GPU: the host tier beside the device or pinned tier).
[[nodiscard]] Placement parse_placement(std::string_view text, int tables);

// InputError unless the placement's tiers can share one step's space.
void check_placement(const Placement& placement);

// `ranges` with the tables that are not on `tier` emptied: what a store of that tier holds.
[[nodiscard]] std::vector<RowRange> ranges_on(const Placement& placement, StorageTier tier,
                                              std::span<const RowRange> ranges);

}  // namespace pleshard
