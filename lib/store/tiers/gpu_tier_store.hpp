#pragma once
// The row store of the tiers the GPU reads in place (device, pinned): GpuStore, where this
// build has CUDA; elsewhere an InputError naming the tier.

#include <memory>
#include <span>

#include "ckpt/ple_checkpoint.hpp"
#include "exec/step_space.hpp"
#include "store/row_store.hpp"
#include "store/store_options.hpp"

namespace pleshard {

[[nodiscard]] std::unique_ptr<RowStore> make_gpu_tier_store(StorageTier tier, const PleCheckpoint& checkpoint,
                                                            std::span<const RowRange> ranges, StepSpace& space,
                                                            const StoreOptions& options);

}  // namespace pleshard
