#pragma once
// CUDA kernel: the H n-gram ids of every token of a batch held in device memory.

#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/common/ngram_hash.hpp"

namespace pleshard::kernels {

// `batch` pointers and `ids` (num_tokens * H) are device memory; enqueued on `stream`.
void compute_ngram_ids_cuda(const NgramHashParams& params, const NgramBatchView& batch,
                            std::int64_t* ids, cudaStream_t stream);

}  // namespace pleshard::kernels
