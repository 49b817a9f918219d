#include "store/storage_tier.hpp"

#include <optional>
#include <string>

#include "core/enum_names.hpp"
#if PLESHARD_HAVE_CUDA
#include "kernels/cuda/device.hpp"
#endif

namespace pleshard {

bool gpu_available() {
#if PLESHARD_HAVE_CUDA
  return kernels::cuda_device_count() > 0;
#else
  return false;
#endif
}

namespace {

constexpr EnumNames<StorageTier, 4> k_tiers{{{StorageTier::host, "host"},
                                             {StorageTier::device, "device"},
                                             {StorageTier::pinned, "pinned"},
                                             {StorageTier::disk, "disk"}}};

// `quoted` and `plain` name the value as refused and as taken.
StorageTier tier_named(std::string_view name, const std::string& quoted, const std::string& plain) {
  const std::optional<StorageTier> tier = find_value(k_tiers, name);
  if (!tier) throw InputError(quoted + ": expected " + name_list(k_tiers));
  if ((*tier == StorageTier::device || *tier == StorageTier::pinned) && !gpu_available())
#if PLESHARD_HAVE_CUDA
    throw InputError(plain +
                     ": no GPU found (none visible to this process: check the node has one, and "
                     "CUDA_VISIBLE_DEVICES and the job's GPU request)");
#else
    throw InputError(plain + ": no GPU support: this build has no CUDA (rebuild where nvcc is found)");
#endif
  return *tier;
}

}  // namespace

const char* to_string(StorageTier tier) { return name_of(k_tiers, tier); }

StorageTier parse_storage_tier(std::string_view name, Option option) {
  return tier_named(name, option_quoted(option, name), option_is(option, name));
}

StorageTier parse_storage_tier(std::string_view name, const std::string& what) {
  return tier_named(name, what + " \"" + quoted_value(name) + "\"", what + " " + quoted_value(name));
}

bool tier_uses_gpu(StorageTier tier) {
  return tier == StorageTier::device || tier == StorageTier::pinned || (tier == StorageTier::disk && gpu_available());
}

TierCapabilities capabilities_of(StorageTier tier) {
  switch (tier) {
    case StorageTier::host:
      return {.loads_collectively = true, .in_host_memory = true};
    case StorageTier::device:
      return {.graph_capturable = true};
    case StorageTier::pinned:
      return {.graph_capturable = true, .cacheable = true, .in_host_memory = true};
    case StorageTier::disk:
      return {.whole_tables = true, .cacheable = true, .reads_files = true};
  }
  return {};
}

}  // namespace pleshard
