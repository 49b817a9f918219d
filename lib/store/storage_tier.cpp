#include "store/storage_tier.hpp"

#include <string>

#include "core/error.hpp"
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

const char* to_string(StorageTier tier) {
  switch (tier) {
    case StorageTier::host: return "host";
    case StorageTier::device: return "device";
    case StorageTier::pinned: return "pinned";
    case StorageTier::disk: return "disk";
  }
  return "?";
}

StorageTier parse_storage_tier(std::string_view name) {
  if (name == "host") return StorageTier::host;
  if (name == "disk") return StorageTier::disk;
  StorageTier tier;
  if (name == "device") {
    tier = StorageTier::device;
  } else if (name == "pinned") {
    tier = StorageTier::pinned;
  } else {
    throw InputError("--storage " + std::string(name) + ": expected host, device, pinned or disk");
  }
  if (gpu_available()) return tier;
  throw InputError("--storage " + std::string(name) + ": needs a CUDA build and a GPU");
}

bool tier_uses_gpu(StorageTier tier) {
  return tier == StorageTier::device || tier == StorageTier::pinned || (tier == StorageTier::disk && gpu_available());
}

}  // namespace pleshard
