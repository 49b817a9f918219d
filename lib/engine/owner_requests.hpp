#pragma once
// One layer's lookups of a step under the owner exchange, planned on the host: my ids
// deduplicated in ascending order — which groups them by owner, since each ETP rank owns
// one contiguous range — the owner-local indexes sent to each owner in the narrowest width
// that holds one, and every id's key into the rows that come back (which arrive in the same
// order).

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace pleshard {

struct OwnerRequests {
  std::vector<std::int64_t> per_owner;  // distinct ids asked of each owner
  std::int64_t distinct = 0;            // their sum
  std::vector<std::uint8_t> local_ids;  // the distinct ids as owner-local indexes, `width` bytes each
  std::vector<std::int64_t> keys;       // per id: its row among the distinct ones; -1 outside the table
  std::vector<std::pair<std::int64_t, std::uint32_t>> order;  // scratch: (id, position), sorted
  std::vector<std::pair<std::int64_t, std::uint32_t>> scratch;
};

// `bounds`: E + 1 ascending row boundaries, owner o holding rows [bounds[o], bounds[o + 1]).
// At most 2^32 ids.
void plan_owner_requests(std::span<const std::int64_t> ids, std::span<const std::int64_t> bounds, int width,
                         OwnerRequests& out);

}  // namespace pleshard
