// The disk tier: each step's distinct rows read from the checkpoint's files (store/disk_store.hpp),
// only block scales kept in host memory; whole tables where it is the only tier, so that every
// rank looks up its own tokens. Decoded wherever the step runs.

#include "store/disk_store.hpp"
#include "store/tier_descriptor.hpp"
#include "store/tier_memory.hpp"

namespace pleshard {

TierDescriptor disk_tier() {
  TierDescriptor tier;
  tier.name = "disk";
  tier.help = "rows read from the checkpoint each step";
  tier.speed_order = 40;
  tier.decodes = DecodesOn::step_space;
  tier.capabilities = {.whole_tables = true, .cacheable = true, .reads_files = true};
  tier.memory = [](std::span<const TableLayout> layouts, std::span<const RowRange> ranges) {
    return std::vector<MemoryUse>{{MemoryKind::host, rows_scale_bytes(layouts, ranges)}};
  };
  tier.load_bytes = rows_scale_bytes;
  tier.memory_remedy = [] { return std::string("fewer ranks per node: the disk tier keeps block scales"); };
  tier.make_store = [](StorageTier, const PleCheckpoint& checkpoint, std::span<const RowRange> ranges, StepSpace& space,
                       const StoreOptions& options) -> std::unique_ptr<RowStore> {
    return std::make_unique<DiskStore>(checkpoint, ranges, space, options.disk_reads);
  };
  return tier;
}

}  // namespace pleshard
