#include <algorithm>
#include <deque>
#include <string>

#include "core/error.hpp"
#include "store/tier_descriptor.hpp"

namespace pleshard {

// The built-in tiers' descriptors, each the one function of its file in store/tiers/.
TierDescriptor host_tier();
TierDescriptor device_tier();
TierDescriptor pinned_tier();
TierDescriptor disk_tier();

namespace {

// Every tier, indexed by its id: the built-ins listed here once, in StorageTier's order (an
// explicit list rather than registrars in each tier's file, which a static link would drop).
// A new built-in tier is its file and its two lines here.
// A deque, so that a descriptor handed out stays where it is when another is registered.
std::deque<TierDescriptor>& registry() {
  static std::deque<TierDescriptor> tiers{host_tier(), device_tier(), pinned_tier(), disk_tier()};
  return tiers;
}

}  // namespace

StorageTier register_tier(TierDescriptor descriptor) {
  if (descriptor.name.empty() || find_tier(descriptor.name))
    throw SystemError("storage tier \"" + descriptor.name + "\": the name is empty or taken");
  if (!descriptor.memory || !descriptor.load_bytes || !descriptor.memory_remedy || !descriptor.make_store)
    throw SystemError("storage tier \"" + descriptor.name + "\": a descriptor needs every function");
  registry().push_back(std::move(descriptor));
  return static_cast<StorageTier>(registry().size() - 1);
}

const TierDescriptor& tier_descriptor(StorageTier tier) {
  const auto id = static_cast<std::size_t>(tier);
  if (id >= registry().size()) throw SystemError("storage tier " + std::to_string(id) + ": none is registered");
  return registry()[id];
}

std::optional<StorageTier> find_tier(std::string_view name) {
  const std::deque<TierDescriptor>& tiers = registry();
  for (std::size_t id = 0; id < tiers.size(); ++id)
    if (tiers[id].name == name) return static_cast<StorageTier>(id);
  return std::nullopt;
}

std::vector<std::string> storage_tier_names() {
  std::vector<std::string> names;
  for (const TierDescriptor& tier : registry()) names.push_back(tier.name);
  return names;
}

std::string storage_tier_help() {
  std::string help;
  for (const TierDescriptor& tier : registry())
    help += (help.empty() ? "" : ", ") + tier.name + (tier.help.empty() ? "" : " (" + tier.help + ")");
  return help;
}

std::vector<StorageTier> storage_tiers() {
  std::vector<StorageTier> tiers;
  for (std::size_t id = 0; id < registry().size(); ++id) tiers.push_back(static_cast<StorageTier>(id));
  std::stable_sort(tiers.begin(), tiers.end(), [](StorageTier a, StorageTier b) {
    return tier_descriptor(a).speed_order < tier_descriptor(b).speed_order;
  });
  return tiers;
}

}  // namespace pleshard
