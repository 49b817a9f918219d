#pragma once
// A layer's row plan: what a step's lookups of one table need, found once. Its lookups (ids,
// in any order, repeated, some outside the table) against the owners of the table's rows
// (E + 1 ascending bounds: owner o holds rows [bounds[o], bounds[o + 1])) give
//   distinct    the ids inside [bounds[0], bounds[E]), each once, ascending — so grouped by
//               owner, each owner's range being contiguous;
//   keys        per lookup, its position among the distinct ids, -1 outside the bounds;
//   owners      per owner, where its distinct ids start (E + 1 entries, the last the count).
// Every consumer of distinct rows reads this plan: the owner exchange (what to ask of
// whom), the pinned tier (which rows cross PCIe), the disk tier (which rows to read). It is
// made by plan_rows on the host (kernels/host/row_plan_host.hpp) and by DeviceRowPlan on the
// GPU (kernels/cuda/row_plan_cuda.hpp); tests hold both to one reference.

#include <cstdint>

#include "kernels/common/host_device.hpp"

namespace pleshard::kernels {

// The first index of `sorted[0, count)` not less than `value`: where an owner's distinct ids
// start, by its first row.
template <typename T, typename V>
PLESHARD_HD inline std::int64_t lower_bound_of(const T* sorted, std::int64_t count, V value) {
  std::int64_t lo = 0;
  std::int64_t hi = count;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (sorted[mid] < value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The first index of `sorted[0, count)` greater than `value`: the owner of a distinct id's
// position, by the owners' starts.
template <typename T, typename V>
PLESHARD_HD inline std::int64_t upper_bound_of(const T* sorted, std::int64_t count, V value) {
  std::int64_t lo = 0;
  std::int64_t hi = count;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (value < sorted[mid]) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

// Fixed-size messages (an owner exchange whose sizes cannot wait for the host: a step
// captured in a CUDA graph): every owner gets `slots` entries whatever it is asked, distinct
// id j at entry j - owners[o] of owner o's block. An entry holds the owner-local index plus
// one, 0 where empty (kernels/common/row_pack.hpp: narrow_local_id, widen_local_id), so an
// owner that widens from its first row less one reads an empty entry as the row before its
// range: none of its rows, a zero row.
PLESHARD_HD inline std::int64_t slot_of(const std::int64_t* owners, int owner_count, std::int64_t j,
                                        std::int64_t slots) {
  const std::int64_t o = upper_bound_of(owners, owner_count, j) - 1;
  return o * slots + (j - owners[o]);
}

}  // namespace pleshard::kernels
