#include "engine/owner_requests.hpp"

#include "kernels/common/row_pack.hpp"

namespace pleshard {

void plan_owner_requests(std::span<const std::int64_t> ids, std::span<const std::int64_t> bounds, int width,
                         OwnerRequests& out) {
  kernels::plan_rows(ids, bounds, out.rows);
  out.local_ids.resize(out.rows.distinct.size() * static_cast<std::size_t>(width));
  for (std::size_t o = 0; o + 1 < bounds.size(); ++o)
    for (std::int64_t j = out.rows.owners[o]; j < out.rows.owners[o + 1]; ++j)
      kernels::narrow_local_id(out.local_ids.data(), width, j,
                               static_cast<std::uint64_t>(out.rows.distinct[static_cast<std::size_t>(j)] - bounds[o]));
}

}  // namespace pleshard
