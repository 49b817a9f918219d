#include "store/tiers/gpu_tier_store.hpp"

#include "core/error.hpp"
#include "core/option_names.hpp"
#if PLESHARD_HAVE_CUDA
#include "ckpt/synthetic.hpp"
#include "store/gpu_store.hpp"
#endif

namespace pleshard {

std::unique_ptr<RowStore> make_gpu_tier_store(StorageTier tier, const PleCheckpoint& checkpoint,
                                              std::span<const RowRange> ranges, StepSpace& space,
                                              const StoreOptions& options) {
#if PLESHARD_HAVE_CUDA
  PinnedReads reads;
  reads.host = options.host_reads;
  reads.host_threads = options.host_threads;
  return std::make_unique<GpuStore>(checkpoint_tables(checkpoint), ranges, tier, space, options.host_share, reads);
#else
  (void)checkpoint;
  (void)ranges;
  (void)space;
  (void)options;
  throw InputError(option_is(Option::storage, to_string(tier)) + ": needs a CUDA build");
#endif
}

}  // namespace pleshard
