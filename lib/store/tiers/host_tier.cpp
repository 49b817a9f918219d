// The host tier: each rank's row range in host memory (one copy per node where ranks share
// it), read in place and decoded on the host's cores.

#include "core/option_names.hpp"
#include "store/host_store.hpp"
#include "store/tier_descriptor.hpp"
#include "store/tier_memory.hpp"

namespace pleshard {

TierDescriptor host_tier() {
  TierDescriptor tier;
  tier.name = "host";
  tier.help = "CPU memory";
  tier.speed_order = 30;
  tier.decodes = DecodesOn::host;
  tier.capabilities = {.loads_collectively = true, .in_host_memory = true};
  tier.memory = [](std::span<const TableLayout> layouts, std::span<const RowRange> ranges) {
    return std::vector<MemoryUse>{{MemoryKind::host, rows_stored_bytes(layouts, ranges)}};
  };
  tier.load_bytes = rows_stored_bytes;
  tier.memory_remedy = [] { return "use more nodes, or " + option_is(Option::storage, "disk"); };
  tier.make_store = [](StorageTier, const PleCheckpoint& checkpoint, std::span<const RowRange> ranges, StepSpace&,
                       const StoreOptions& options) -> std::unique_ptr<RowStore> {
    return std::make_unique<HostStore>(checkpoint, ranges, options.host_share);
  };
  return tier;
}

}  // namespace pleshard
