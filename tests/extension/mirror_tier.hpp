#pragma once
// A storage tier defined outside the library, as a user of it would add one: "mirror", a
// host-memory tier that keeps its rows in vectors of its own, copied from what the host tier
// loads, stages each step's rows in a block of the step's own (fetching ahead: two sets of
// blocks, taken in turn) and decodes them on the host as the host tier does. Linking mirror_tier.cpp in
// registers it (docs/architecture.md, "Adding a storage tier").

#include "store/tier_descriptor.hpp"

namespace mirror_tier {

inline constexpr const char* k_name = "mirror";

// The id the registry gave the tier.
[[nodiscard]] pleshard::StorageTier tier();
// What it registered (registering it again fails: the name is taken).
[[nodiscard]] pleshard::TierDescriptor descriptor();

}  // namespace mirror_tier
