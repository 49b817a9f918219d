#pragma once
// Where a table lives while it is looked up (docs/design.md §6).

#include <string>
#include <string_view>
#include <vector>

#include "core/option_names.hpp"

namespace pleshard {

// A tier's id: the built-in tiers' named here, in the order they are registered; any other
// registered tier's the value register_tier() returns (store/tier_descriptor.hpp, where
// every tier is described).
enum class StorageTier : int { host, device, pinned, disk };

// Every registered tier, the fastest first.
[[nodiscard]] std::vector<StorageTier> storage_tiers();

// Every registered tier's name, in the order they were registered (the built-ins first): what
// --storage and --placement accept.
[[nodiscard]] std::vector<std::string> storage_tier_names();
// The same names, each with its help: "host (CPU memory), device (GPU memory), ..." for
// --storage's help.
[[nodiscard]] std::string storage_tier_help();

[[nodiscard]] const char* to_string(StorageTier tier);
// A registered tier's name ("host", "device", "pinned", "disk", ...); throws InputError
// otherwise, or when a tier that decodes on the GPU (device, pinned) is asked for in a build
// without CUDA or on a machine without a GPU.
// `option` names the option in the message; `what` names a part of one ("--placement: table
// 0's tier").
[[nodiscard]] StorageTier parse_storage_tier(std::string_view name, Option option = Option::storage);
[[nodiscard]] StorageTier parse_storage_tier(std::string_view name, const std::string& what);

// Where a tier's lookups decode: a step decodes every table in one place.
enum class DecodesOn {
  gpu,         // needs CUDA and a GPU (device, pinned)
  host,        // on the host's cores (host)
  step_space,  // wherever the step runs: the GPU where there is one (disk)
};

// Whether this build has CUDA and this machine a GPU.
[[nodiscard]] bool gpu_available();

// Whether lookups in `tier` run on the GPU: always for device and pinned; for disk when
// this build and machine have one (rows are staged to the device and decoded there),
// otherwise on the host (the tier's DecodesOn).
[[nodiscard]] bool tier_uses_gpu(StorageTier tier);

// What a tier is, for the code outside lib/store to ask instead of naming tiers: one channel
// (a store's own answers, RowStore, say only what varies with a step).
struct TierCapabilities {
  // Every rank reads every row of every table (the files are shared): each rank hashes and
  // looks up its own tokens and nothing is exchanged.
  bool whole_tables = false;
  // Rows in memory the GPU reads at fixed addresses, every step's work enqueued on its
  // stream: CUDA graphs can capture a step.
  bool graph_capturable = false;
  // Slow enough per row that a row cache in GPU or host memory pays in front of it.
  bool cacheable = false;
  // Reads its rows from checkpoint files while it runs (a synthetic checkpoint has none).
  bool reads_files = false;
  // Loads each rank's row range in one collective read per table; the other tiers open
  // the files on their own, so no read of theirs waits for other ranks.
  bool loads_collectively = false;
  // Holds its rows in the node's host memory, so that the ranks of a node holding the same
  // rows can keep one copy of them.
  bool in_host_memory = false;
};

[[nodiscard]] TierCapabilities capabilities_of(StorageTier tier);

}  // namespace pleshard
