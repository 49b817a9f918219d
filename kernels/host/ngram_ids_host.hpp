#pragma once
// Host (Kokkos) kernels: the H n-gram ids of every token of a batch, for one layer, or for
// every layer of a step at once.

#include <cstdint>

#include "kernels/common/id_tally.hpp"
#include "kernels/common/ngram_hash.hpp"

namespace pleshard::kernels {

// ids: num_tokens * H entries, row-major. Runs on Kokkos' default host execution space.
void compute_ngram_ids_host(const NgramHashParams& params, const NgramBatchView& batch, std::int64_t* ids);

// As compute_step_ids_cuda: `layers` blocks of batch.tokens() x H ids, counted into `tally`
// where it is given.
void compute_step_ids_host(const NgramHashParams* params, int layers, const SlotBatchView& batch, std::int64_t* ids,
                           const IdTally& tally = {});

}  // namespace pleshard::kernels
