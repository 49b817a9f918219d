#include "store/row_store_factory.hpp"

#include <string>

#include "core/error.hpp"
#include "core/option_names.hpp"
#include "exec/step_kernels.hpp"
#include "format/format_registry.hpp"
#include "store/tier_descriptor.hpp"

namespace pleshard {

void require_tier_decodes(StorageTier tier, RowFormat format) {
  if (tier_uses_gpu(tier) && !describe(format).device_kernels)
    throw InputError(option_is(Option::storage, to_string(tier)) + ": format " + to_string(format) +
                     " has no GPU kernel (the host tier serves it)");
}

std::unique_ptr<RowStore> make_row_store(StorageTier tier, const PleCheckpoint& checkpoint,
                                         std::span<const RowRange> ranges, StepSpace& space,
                                         const StoreOptions& options) {
  for (const PleTableInfo& table : checkpoint.tables()) require_tier_decodes(tier, table.layout.format);
  return tier_descriptor(tier).make_store(tier, checkpoint, ranges, space, options);
}

std::unique_ptr<StepSpace> make_tier_space(StorageTier tier) {
  if (tier_uses_gpu(tier)) return make_cuda_space();
  return make_host_space();
}

std::vector<std::uint8_t> lookup_from_host(RowStore& store, StepSpace& space, int layer,
                                           std::span<const std::int64_t> ids, OutDtype dtype) {
  const std::size_t out_bytes =
      ids.size() * static_cast<std::size_t>(store.layout(layer).head_dim) * kernels::out_bytes(dtype);
  SpaceBuffer space_ids(space);
  SpaceBuffer space_out(space);
  space_ids.assign(ids);
  space_out.reserve(std::max<std::size_t>(1, out_bytes));
  std::vector<RowQuery> queries(static_cast<std::size_t>(store.layers()));
  queries[static_cast<std::size_t>(layer)] = {space_ids.as<std::int64_t>(), static_cast<std::int64_t>(ids.size())};
  store.submit(queries);
  kernels::DecodeTask task = store.wait()[static_cast<std::size_t>(layer)];
  task.out = space_out.data();
  decode_step(space, {&task, 1}, dtype);
  return space_out.to_host<std::uint8_t>(out_bytes);
}

}  // namespace pleshard
