#include "store/storage_tier.hpp"

#include <string>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "kernels/gpu_device.hpp"
#include "store/tier_descriptor.hpp"

namespace pleshard {

bool gpu_available() { return kernels::gpu_count() > 0; }

namespace {

// `quoted` and `plain` name the value as refused and as taken.
StorageTier tier_named(std::string_view name, const std::string& quoted, const std::string& plain) {
  const std::optional<StorageTier> tier = find_tier(name);
  if (!tier) throw InputError(quoted + ": expected " + or_list(storage_tier_names()));
  if (tier_descriptor(*tier).decodes == DecodesOn::gpu && !gpu_available())
    throw InputError(plain + (kernels::built_with_cuda()
                                  ? ": no GPU found (none visible to this process: check the node has "
                                    "one, and CUDA_VISIBLE_DEVICES and the job's GPU request)"
                                  : ": no GPU support: this build has no CUDA (rebuild where nvcc is found)"));
  return *tier;
}

}  // namespace

const char* to_string(StorageTier tier) { return tier_descriptor(tier).name.c_str(); }

StorageTier parse_storage_tier(std::string_view name, Option option) {
  return tier_named(name, option_quoted(option, name), option_is(option, name));
}

StorageTier parse_storage_tier(std::string_view name, const std::string& what) {
  return tier_named(name, what + " \"" + quoted_value(name) + "\"", what + " " + quoted_value(name));
}

bool tier_uses_gpu(StorageTier tier) {
  const DecodesOn where = tier_descriptor(tier).decodes;
  return where == DecodesOn::gpu || (where == DecodesOn::step_space && gpu_available());
}

TierCapabilities capabilities_of(StorageTier tier) { return tier_descriptor(tier).capabilities; }

}  // namespace pleshard
