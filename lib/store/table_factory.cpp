#include "store/table_factory.hpp"

#include <algorithm>
#include <string>

#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "store/disk_table.hpp"
#include "store/host_table.hpp"
#if PLESHARD_HAVE_CUDA
#include "store/gpu_tier.hpp"
#endif

namespace pleshard {

std::unique_ptr<TableTier> make_table_tier(StorageTier tier, const PleCheckpoint& checkpoint, int ple_index,
                                           RowRange range, StepSpace& space) {
  switch (tier) {
    case StorageTier::host:
      return std::make_unique<HostTable>(checkpoint, ple_index, range);
    case StorageTier::disk:
      return std::make_unique<DiskTable>(checkpoint, ple_index, space);
    case StorageTier::device:
    case StorageTier::pinned:
      break;
  }
#if PLESHARD_HAVE_CUDA
  return std::make_unique<GpuTier>(checkpoint_tables(checkpoint)[static_cast<std::size_t>(ple_index)], range, tier,
                                   space);
#else
  (void)space;
  throw InputError(std::string("--storage ") + to_string(tier) + ": needs a CUDA build");
#endif
}

std::unique_ptr<StepSpace> make_tier_space(StorageTier tier) {
#if PLESHARD_HAVE_CUDA
  if (tier_uses_gpu(tier)) return make_cuda_space();
#else
  (void)tier;
#endif
  return make_host_space();
}

std::vector<std::uint8_t> lookup_from_host(TableTier& table, StepSpace& space, std::span<const std::int64_t> ids,
                                           OutDtype dtype) {
  const std::size_t out_bytes = ids.size() * static_cast<std::size_t>(table.layout().head_dim) * kernels::out_bytes(dtype);
  SpaceBuffer space_ids(space);
  SpaceBuffer space_out(space);
  space_ids.assign(ids);
  space_out.reserve(std::max<std::size_t>(1, out_bytes));
  table.lookup(space_ids.as<std::int64_t>(), static_cast<std::int64_t>(ids.size()), dtype, space_out.data());
  return space_out.to_host<std::uint8_t>(out_bytes);
}

}  // namespace pleshard
