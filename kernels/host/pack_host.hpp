#pragma once
// The owner exchange's packing on the host (Kokkos; kernels/common/row_pack.hpp): stored
// rows packed for a peer.

#include <cstdint>
#include <span>

#include "kernels/common/row_pack.hpp"

namespace pleshard::kernels {

// Every task's packed rows; returns when they are written.
void pack_rows_host(std::span<const PackTask> tasks);

}  // namespace pleshard::kernels
