#pragma once
// A storage tier's row store and the step space it runs in, as its descriptor says.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "exec/step_space.hpp"
#include "store/row_store.hpp"
#include "store/store_options.hpp"

namespace pleshard {

// Refuses, in one line, tables of `format` in `tier` where the tier decodes on the GPU (the
// disk tier does where one is present) and the format has no GPU kernel (a registered one).
void require_tier_decodes(StorageTier tier, RowFormat format);

// Every table of the checkpoint in `tier`, as its descriptor makes them
// (store/tier_descriptor.hpp): rows ranges[d] of table d, in `space` (the host space for a
// tier that decodes on the host, a CUDA space for one that decodes on the GPU). The
// checkpoint must outlive the store.
[[nodiscard]] std::unique_ptr<RowStore> make_row_store(StorageTier tier, const PleCheckpoint& checkpoint,
                                                       std::span<const RowRange> ranges, StepSpace& space,
                                                       const StoreOptions& options = {});

// The space a tier's steps run in on this process's current device.
[[nodiscard]] std::unique_ptr<StepSpace> make_tier_space(StorageTier tier);

// One layer's rows of `ids` (host memory) through the store, decoded: the ids copied into
// `space`, fetched, decoded there and copied back; waits for the result.
[[nodiscard]] std::vector<std::uint8_t> lookup_from_host(RowStore& store, StepSpace& space, int layer,
                                                         std::span<const std::int64_t> ids, OutDtype dtype);

}  // namespace pleshard
