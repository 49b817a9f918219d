#pragma once
// A count kept by the kernels that see a step's lookups: how many of them read rows of a
// group's one copy outside this rank's own part (peer reads: ExchangeTraffic::rows_from_peers).

#include <cstdint>

#include "kernels/common/host_device.hpp"

namespace pleshard::kernels {

// Ids a kernel counts as it writes them (a step's hash, the owner's widening of the ids
// asked of it): per layer d, the ids of entries [first, last) inside rows
// [bounds[4d], bounds[4d + 1]) and outside rows [bounds[4d + 2], bounds[4d + 3]) are added to
// outside[d] — the rows a rank of a group that reads one copy in place (the first range)
// reads from the others' parts (outside the second, its own). An entry is a token of the
// hash (its heads' ids), an id of the widening. bounds and outside are device-accessible
// where the kernel runs on the GPU; a null tally counts nothing.
struct IdTally {
  const std::int64_t* bounds = nullptr;
  unsigned long long* outside = nullptr;
  std::int64_t first = 0;
  std::int64_t last = 0;
  [[nodiscard]] PLESHARD_HD bool counts(int layer, std::int64_t entry, std::int64_t id) const {
    return counts_within(bounds + 4 * layer, entry, id);
  }
  // counts() with the layer's four bounds `b` where the caller keeps them (a kernel's registers).
  [[nodiscard]] PLESHARD_HD bool counts_within(const std::int64_t* b, std::int64_t entry, std::int64_t id) const {
    return entry >= first && entry < last && id >= b[0] && id < b[1] && (id < b[2] || id >= b[3]);
  }
};

}  // namespace pleshard::kernels
