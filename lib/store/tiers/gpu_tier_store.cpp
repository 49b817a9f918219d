#include "store/tiers/gpu_tier_store.hpp"

#include "ckpt/synthetic.hpp"
#include "store/gpu_store.hpp"

namespace pleshard {

std::unique_ptr<RowStore> make_gpu_tier_store(StorageTier tier, const PleCheckpoint& checkpoint,
                                              std::span<const RowRange> ranges, StepSpace& space,
                                              const StoreOptions& options) {
  PinnedReads reads;
  reads.host = options.host_reads;
  reads.host_threads = options.host_threads;
  const MPI_Comm share = tier == StorageTier::device ? options.device_share : options.host_share;
  return std::make_unique<GpuStore>(checkpoint_tables(checkpoint), ranges, tier, space, share, reads);
}

}  // namespace pleshard
