#include "store/storage_tier.hpp"

#include <string>

#include "core/error.hpp"
#if PLESHARD_HAVE_CUDA
#include "kernels/cuda/device.hpp"
#endif

namespace pleshard {

const char* to_string(StorageTier tier) {
  switch (tier) {
    case StorageTier::host: return "host";
    case StorageTier::device: return "device";
    case StorageTier::pinned: return "pinned";
  }
  return "?";
}

StorageTier parse_storage_tier(std::string_view name) {
  StorageTier tier;
  if (name == "host") return StorageTier::host;
  if (name == "device") {
    tier = StorageTier::device;
  } else if (name == "pinned") {
    tier = StorageTier::pinned;
  } else {
    throw InputError("--storage " + std::string(name) + ": expected host, device or pinned");
  }
#if PLESHARD_HAVE_CUDA
  if (kernels::cuda_device_count() > 0) return tier;
#endif
  throw InputError("--storage " + std::string(name) + ": needs a CUDA build and a GPU");
}

}  // namespace pleshard
