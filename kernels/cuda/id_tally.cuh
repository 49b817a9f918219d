#pragma once
// Adding to an IdTally from a kernel (kernels/common/id_tally.hpp).

#include "kernels/common/id_tally.hpp"

namespace pleshard::kernels {

// A warp's share of a tally: its threads' counts summed by shuffles, then one atomic add a
// warp. Every lane of the warp calls it. Not a block's sum in shared memory: that cost a
// peer-read step about 10 us on an H100 (its barriers and shared variable beside the hash's
// staging area), where the warps' atomics cost nothing measurable.
__device__ inline void add_to_tally(const IdTally& tally, int layer, unsigned long long mine) {
  for (int offset = 16; offset > 0; offset /= 2) mine += __shfl_down_sync(0xffffffffU, mine, offset);
  if ((threadIdx.x & 31U) == 0 && mine != 0) atomicAdd(tally.outside + layer, mine);
}

}  // namespace pleshard::kernels
