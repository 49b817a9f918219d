// The device tier: each rank's row range in its GPU's memory, block-scaled rows with their
// scales beside the codes (gpu_row_pitch), read in place by the step's decode.

#include "core/option_names.hpp"
#include "store/tier_descriptor.hpp"
#include "store/tier_memory.hpp"
#include "store/tiers/gpu_tier_store.hpp"

namespace pleshard {

TierDescriptor device_tier() {
  TierDescriptor tier;
  tier.name = "device";
  tier.help = "GPU memory";
  tier.speed_order = 10;
  tier.decodes = DecodesOn::gpu;
  tier.capabilities = {.graph_capturable = true};
  tier.memory = [](std::span<const TableLayout> layouts, std::span<const RowRange> ranges) {
    return std::vector<MemoryUse>{{MemoryKind::gpu, rows_gpu_bytes(layouts, ranges)}};
  };
  tier.load_bytes = rows_stored_bytes;
  tier.memory_remedy = [] { return "use more ranks, or " + option_is(Option::storage, "pinned"); };
  tier.make_store = make_gpu_tier_store;
  return tier;
}

}  // namespace pleshard
