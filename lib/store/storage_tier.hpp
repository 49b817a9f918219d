#pragma once
// Where a table lives while it is looked up (docs/design.md §6).

#include <string_view>

namespace pleshard {

enum class StorageTier { host, device, pinned, disk };

[[nodiscard]] const char* to_string(StorageTier tier);
// "host", "device", "pinned" or "disk"; throws InputError otherwise, or when device or
// pinned is asked for in a build without CUDA or on a machine without a GPU.
[[nodiscard]] StorageTier parse_storage_tier(std::string_view name);

// Whether this build has CUDA and this machine a GPU.
[[nodiscard]] bool gpu_available();

// Whether lookups in `tier` run on the GPU: always for device and pinned; for disk when
// this build and machine have one (rows are staged to the device and decoded there),
// otherwise on the host.
[[nodiscard]] bool tier_uses_gpu(StorageTier tier);

}  // namespace pleshard
