#pragma once
// The owner exchange's packing on the GPU (kernels/common/row_pack.hpp): stored rows packed
// for a peer, on a stream.

#include <cstdint>
#include <span>

#include <cuda_runtime_api.h>

#include "kernels/common/row_pack.hpp"

namespace pleshard::kernels {

// Every task's packed rows (at most k_max_step_layers tasks), one launch per task.
void pack_rows_cuda(std::span<const PackTask> tasks, cudaStream_t stream);

}  // namespace pleshard::kernels
