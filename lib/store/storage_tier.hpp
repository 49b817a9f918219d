#pragma once
// Where a table lives while it is looked up (DESIGN.md §6).

#include <string_view>

namespace pleshard {

enum class StorageTier { host, device, pinned };

[[nodiscard]] const char* to_string(StorageTier tier);
// "host", "device" or "pinned"; throws InputError otherwise, or when a GPU tier is asked
// for in a build without CUDA or on a machine without a GPU.
[[nodiscard]] StorageTier parse_storage_tier(std::string_view name);

}  // namespace pleshard
