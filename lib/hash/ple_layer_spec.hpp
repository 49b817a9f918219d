#pragma once
// Per-layer quantities derived once from the config (DESIGN.md §2, §4) and shared by
// every later component: multipliers, prime head sizes, offsets, padded and shard rows.

#include <cstdint>
#include <vector>

#include "config/model_config.hpp"
#include "kernels/common/ngram_hash.hpp"

namespace pleshard {

struct PleLayerSpec {
  int ple_index = 0;      // d: position of the layer in sorted(set(ple_layer_ids))
  int decoder_layer = 0;  // 1-based decoder layer id
  int ngram_size = 0;
  int heads_per_ngram = 0;
  int head_dim = 0;
  std::int64_t eos_token_id = 0;
  std::vector<std::int64_t> multipliers;   // N entries
  std::vector<std::int64_t> head_sizes;    // H primes >= ngram_vocab_size_base
  std::vector<std::int64_t> head_offsets;  // running sums of head_sizes
  std::int64_t logical_rows = 0;           // sum of head_sizes
  std::int64_t padded_rows = 0;            // logical_rows rounded up to the divisor
  std::int64_t shard_rows = 0;             // ceil(padded_rows / split_ngram_parts)

  [[nodiscard]] int total_heads() const { return static_cast<int>(head_sizes.size()); }
};

// Specs of every PLE layer, in PLE-index order. Primes are enumerated once for all layers.
[[nodiscard]] std::vector<PleLayerSpec> derive_layer_specs(const ModelConfig& config);

// The spec of one PLE index (throws InputError when out of range).
[[nodiscard]] PleLayerSpec derive_layer_spec(const ModelConfig& config, int ple_index);

// The kernels' by-value parameter block for one layer.
[[nodiscard]] kernels::NgramHashParams make_hash_params(const PleLayerSpec& spec);

}  // namespace pleshard
