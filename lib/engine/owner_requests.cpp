#include "engine/owner_requests.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "kernels/common/row_pack.hpp"

namespace pleshard {

void plan_owner_requests(std::span<const std::int64_t> ids, std::span<const std::int64_t> bounds, int width,
                         OwnerRequests& out) {
  if (bounds.size() < 2) throw SystemError("plan_owner_requests: no owner");
  if (ids.size() > 0xFFFFFFFFull) throw SystemError("plan_owner_requests: more than 2^32 ids");
  const std::size_t owners = bounds.size() - 1;
  out.per_owner.assign(owners, 0);
  out.keys.assign(ids.size(), -1);
  out.order.clear();
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= bounds.front() && ids[i] < bounds.back())
      out.order.emplace_back(ids[i], static_cast<std::uint32_t>(i));
  std::sort(out.order.begin(), out.order.end());

  out.local_ids.resize(out.order.size() * static_cast<std::size_t>(width));
  std::int64_t distinct = -1;
  std::size_t owner = 0;
  for (std::size_t j = 0; j < out.order.size(); ++j) {
    const std::int64_t id = out.order[j].first;
    if (j == 0 || id != out.order[j - 1].first) {
      ++distinct;
      while (id >= bounds[owner + 1]) ++owner;
      ++out.per_owner[owner];
      kernels::narrow_local_id(out.local_ids.data(), width, distinct, static_cast<std::uint64_t>(id - bounds[owner]));
    }
    out.keys[out.order[j].second] = distinct;
  }
  out.distinct = distinct + 1;
  out.local_ids.resize(static_cast<std::size_t>(out.distinct) * static_cast<std::size_t>(width));
}

}  // namespace pleshard
