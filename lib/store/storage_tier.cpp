#include "store/storage_tier.hpp"

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

}  // namespace

const char* to_string(StorageTier tier) { return name_of(k_tiers, tier); }

StorageTier parse_storage_tier(std::string_view name, const std::string& what) {
  const StorageTier tier = parse_value(k_tiers, name, what);
  if ((tier == StorageTier::device || tier == StorageTier::pinned) && !gpu_available())
#if PLESHARD_HAVE_CUDA
    throw InputError(what + " " + std::string(name) +
                     ": no GPU found (none visible to this process: check the node has one, and "
                     "CUDA_VISIBLE_DEVICES and the job's GPU request)");
#else
    throw InputError(what + " " + std::string(name) +
                     ": no GPU support: this build has no CUDA (rebuild where nvcc is found)");
#endif
  return tier;
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
