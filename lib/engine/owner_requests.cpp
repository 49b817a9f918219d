#include "engine/owner_requests.hpp"

namespace pleshard {

void plan_owner_requests(std::span<const std::int64_t> ids, std::span<const std::int64_t> bounds, int width,
                         OwnerRequests& out) {
  kernels::plan_rows(ids, bounds, out.rows);
  out.local_ids.resize(out.rows.distinct.size() * static_cast<std::size_t>(width));
  kernels::write_local_ids(out.rows, bounds, width, out.local_ids.data());
}

}  // namespace pleshard
