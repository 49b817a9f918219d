#pragma once
// The one place that builds a storage tier's table.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "exec/step_space.hpp"
#include "store/table_tier.hpp"

namespace pleshard {

// Table `ple_index` of the checkpoint in `tier`: rows `range` (the disk tier always holds
// every row), looked up in `space` (the host space for the host tier, a CUDA space for
// device and pinned). The checkpoint must outlive a disk table.
[[nodiscard]] std::unique_ptr<TableTier> make_table_tier(StorageTier tier, const PleCheckpoint& checkpoint,
                                                         int ple_index, RowRange range, StepSpace& space);

// The space a tier's lookups run in on this process's current device.
[[nodiscard]] std::unique_ptr<StepSpace> make_tier_space(StorageTier tier);

// One lookup from host memory: `ids` copied into `space`, looked up in `table` (which runs
// there), the rows copied back; waits for the result.
[[nodiscard]] std::vector<std::uint8_t> lookup_from_host(TableTier& table, StepSpace& space,
                                                         std::span<const std::int64_t> ids, OutDtype dtype);

}  // namespace pleshard
