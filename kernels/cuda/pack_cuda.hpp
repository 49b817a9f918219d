#pragma once
// CUDA kernels of the owner exchange (kernels/common/row_pack.hpp): stored rows packed for
// a peer, and peers' local row indexes widened to ids, on a stream.

#include <cstdint>
#include <span>

#include <cuda_runtime_api.h>

#include "kernels/common/row_pack.hpp"

namespace pleshard::kernels {

// Every task's packed rows (at most k_max_step_layers tasks), one launch per task.
void pack_rows_cuda(std::span<const PackTask> tasks, cudaStream_t stream);

// out[i] = first + the local index i of `width` bytes at `ids`, for i < count.
void widen_ids_cuda(const std::uint8_t* ids, int width, std::int64_t count, std::int64_t first, std::int64_t* out,
                    cudaStream_t stream);

}  // namespace pleshard::kernels
