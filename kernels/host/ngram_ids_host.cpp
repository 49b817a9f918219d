#include "kernels/host/ngram_ids_host.hpp"

#include <Kokkos_Core.hpp>

namespace pleshard::kernels {

void compute_ngram_ids_host(const NgramHashParams& params, const NgramBatchView& batch,
                            std::int64_t* ids) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const std::int64_t heads = params.total_heads();
  Kokkos::parallel_for(
      "pleshard::ngram_ids", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(
                                 0, batch.num_tokens),
      [=](std::int64_t t) { ngram_ids_of_token(params, batch, t, ids + t * heads); });
  Space().fence();
}

}  // namespace pleshard::kernels
