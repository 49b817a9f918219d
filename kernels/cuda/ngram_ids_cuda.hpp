#pragma once
// CUDA kernels: the H n-gram ids of every token of a batch held in device memory, for one
// layer, or for every layer of a step at once.

#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/common/id_tally.hpp"
#include "kernels/common/ngram_hash.hpp"

namespace pleshard::kernels {

// `batch` pointers and `ids` (num_tokens * H) are device memory; enqueued on `stream`.
void compute_ngram_ids_cuda(const NgramHashParams& params, const NgramBatchView& batch, std::int64_t* ids,
                            cudaStream_t stream);

// The ids of every layer (params[d], in device memory; every layer has `heads` heads) for
// every token of `batch`: `layers` blocks of batch.tokens() x heads ids, one launch, counted
// into `tally` (device memory) where it is given.
void compute_step_ids_cuda(const NgramHashParams* params, int layers, int heads, const SlotBatchView& batch,
                           std::int64_t* ids, cudaStream_t stream, const IdTally& tally = {});

}  // namespace pleshard::kernels
