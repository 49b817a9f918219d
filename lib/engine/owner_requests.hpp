#pragma once
// One layer's lookups of a step under the owner exchange, planned on the host: the layer's
// row plan against the owners' ranges (kernels/host/row_plan_host.hpp: my distinct ids in
// ascending order — so grouped by owner — and every id's key into them, which is its row
// among the rows that come back, in the same order), and the distinct ids as owner-local
// indexes in the narrowest width that holds one, as they are sent.

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/host/row_plan_host.hpp"

namespace pleshard {

struct OwnerRequests {
  kernels::HostRowPlan rows;
  std::vector<std::uint8_t> local_ids;  // the distinct ids as owner-local indexes, `width` bytes each
};

// `bounds`: E + 1 ascending row boundaries, owner o holding rows [bounds[o], bounds[o + 1]).
// At most 2^32 ids.
void plan_owner_requests(std::span<const std::int64_t> ids, std::span<const std::int64_t> bounds, int width,
                         OwnerRequests& out);

}  // namespace pleshard
