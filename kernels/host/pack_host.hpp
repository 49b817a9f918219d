#pragma once
// The owner exchange's packing on the host (Kokkos; kernels/common/row_pack.hpp): stored
// rows packed for a peer.

#include <cstdint>
#include <span>

#include "kernels/common/id_tally.hpp"
#include "kernels/common/row_pack.hpp"

namespace pleshard::kernels {

// Every task's packed rows; returns when they are written.
void pack_rows_host(std::span<const PackTask> tasks);

// out[i] = first + the owner-local index i of `width` bytes at `ids`, for i < count; each
// counted in `tally` as layer `layer`'s.
void widen_local_ids_host(const std::uint8_t* ids, int width, std::int64_t count, std::int64_t first, std::int64_t* out,
                          const IdTally& tally = {}, int layer = 0);

}  // namespace pleshard::kernels
