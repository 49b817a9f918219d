// The GPU tiers' store in a build without CUDA (lib/CMakeLists.txt builds this file or
// gpu_tier_store.cpp): their names stay known, so that a job that asks for one is told why
// it cannot have it.
#include "core/error.hpp"
#include "core/option_names.hpp"
#include "store/tiers/gpu_tier_store.hpp"

namespace pleshard {

std::unique_ptr<RowStore> make_gpu_tier_store(StorageTier tier, const PleCheckpoint&, std::span<const RowRange>,
                                              StepSpace&, const StoreOptions&) {
  throw InputError(option_is(Option::storage, to_string(tier)) + ": needs a CUDA build");
}

}  // namespace pleshard
