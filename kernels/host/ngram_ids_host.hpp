#pragma once
// Host (Kokkos) kernel: the H n-gram ids of every token of a batch.

#include <cstdint>

#include "kernels/common/ngram_hash.hpp"

namespace pleshard::kernels {

// ids: num_tokens * H entries, row-major. Runs on Kokkos' default host execution space.
void compute_ngram_ids_host(const NgramHashParams& params, const NgramBatchView& batch,
                            std::int64_t* ids);

}  // namespace pleshard::kernels
