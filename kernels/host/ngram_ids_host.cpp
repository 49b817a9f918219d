#include "kernels/host/ngram_ids_host.hpp"

#include <algorithm>
#include <vector>

#include <Kokkos_Core.hpp>

#include "kernels/host/kernel_threads.hpp"

namespace pleshard::kernels {

namespace {

using Space = Kokkos::DefaultHostExecutionSpace;
using TokenRange = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;

// Tokens a thread hashes at a time where the kernel spreads itself (kernel_threads.hpp).
constexpr std::int64_t k_tokens_per_block = 64;

}  // namespace

void compute_ngram_ids_host(const NgramHashParams& params, const NgramBatchView& batch, std::int64_t* ids) {
  const std::int64_t heads = params.total_heads();
  Kokkos::parallel_for("pleshard::ngram_ids", TokenRange(0, batch.num_tokens),
                       [=](std::int64_t t) { ngram_ids_of_token(params, batch, t, ids + t * heads); });
  Space().fence();
}

void compute_step_ids_host(const NgramHashParams* params, int layers, const SlotBatchView& batch, std::int64_t* ids,
                           const IdTally& tally) {
  const std::int64_t tokens = batch.tokens();
  // The tally after the ids, from them: on the host the pass over them costs little.
  const auto count = [&] {
    if (tally.outside == nullptr) return;
    for (int d = 0; d < layers; ++d) {
      const std::int64_t heads = params[d].total_heads();
      const std::int64_t* layer_ids = ids + static_cast<std::int64_t>(d) * tokens * heads;
      unsigned long long outside = 0;
      for (std::int64_t t = std::max<std::int64_t>(0, tally.first); t < std::min(tokens, tally.last); ++t)
        for (std::int64_t h = 0; h < heads; ++h) outside += tally.counts(d, t, layer_ids[t * heads + h]) ? 1 : 0;
      tally.outside[d] += outside;
    }
  };
  if (const std::size_t threads = own_kernel_threads(); threads > 1) {
    const std::vector<std::int64_t> sizes(static_cast<std::size_t>(layers), tokens);
    for_each_block(sizes, k_tokens_per_block, threads, [&](std::size_t d, std::int64_t first, std::int64_t last) {
      const NgramHashParams& layer = params[d];
      const std::int64_t heads = layer.total_heads();
      std::int64_t* out = ids + static_cast<std::int64_t>(d) * tokens * heads;
      for (std::int64_t t = first; t < last; ++t) ngram_ids_of_slot_token(layer, batch, t, out + t * heads);
    });
    count();
    return;
  }
  for (int d = 0; d < layers; ++d) {
    const NgramHashParams& layer = params[d];
    const std::int64_t heads = layer.total_heads();
    std::int64_t* out = ids + d * tokens * heads;
    Kokkos::parallel_for("pleshard::step_ids", TokenRange(0, tokens),
                         [=, &layer](std::int64_t t) { ngram_ids_of_slot_token(layer, batch, t, out + t * heads); });
  }
  Space().fence();
  count();
}

}  // namespace pleshard::kernels
