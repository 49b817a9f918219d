// The pinned tier: each rank's row range in page-locked host memory (one copy per node where
// ranks share it) that the GPU reads through UVA, or the host gathers for it (store/host_reads.hpp);
// decoded on the GPU.

#include "core/option_names.hpp"
#include "store/tier_descriptor.hpp"
#include "store/tier_memory.hpp"
#include "store/tiers/gpu_tier_store.hpp"

namespace pleshard {

TierDescriptor pinned_tier() {
  TierDescriptor tier;
  tier.name = "pinned";
  tier.help = "host memory the GPU reads";
  tier.speed_order = 20;
  tier.decodes = DecodesOn::gpu;
  tier.capabilities = {.graph_capturable = true, .cacheable = true, .in_host_memory = true};
  tier.memory = [](std::span<const TableLayout> layouts, std::span<const RowRange> ranges) {
    return std::vector<MemoryUse>{{MemoryKind::host, rows_gpu_bytes(layouts, ranges)}};
  };
  tier.load_bytes = rows_stored_bytes;
  tier.memory_remedy = [] { return "use more nodes, or " + option_is(Option::storage, "disk"); };
  tier.make_store = make_gpu_tier_store;
  return tier;
}

}  // namespace pleshard
