#pragma once
// The owner exchange's packing on the GPU (kernels/common/row_pack.hpp): stored rows packed
// for a peer, on a stream.

#include <cstdint>
#include <span>

#include <cuda_runtime_api.h>

#include "kernels/common/id_tally.hpp"
#include "kernels/common/row_pack.hpp"

namespace pleshard::kernels {

// Every task's packed rows (at most k_max_step_layers tasks) in one launch.
void pack_rows_cuda(std::span<const PackTask> tasks, cudaStream_t stream);

// out[i] = first + the owner-local index i of `width` bytes at `ids`, for i < count: the ids
// peers asked of this rank, as its store's queries; each counted in `tally` as layer `layer`'s.
void widen_local_ids_cuda(const std::uint8_t* ids, int width, std::int64_t count, std::int64_t first, std::int64_t* out,
                          cudaStream_t stream, const IdTally& tally = {}, int layer = 0);

}  // namespace pleshard::kernels
