#pragma once
// The Qwen4Exp family's per-layer embeddings (docs/design.md §1-§2): `ple_layer_ids` (1-based),
// ngram_size/heads_per_ngram, multipliers from splitmix64 of (seed, layer, order), the
// primes from ngram_vocab_size_base taken in turn by every head of every layer, tables
// padded to a divisor and split into checkpoint shards, EOS blocking older tokens; rows BF16,
// FP8 with a global scale, or NVFP4 (ple_embedding_dtype); vLLM's tensor names.

#include <cstdint>

#include "model/model_family.hpp"

namespace pleshard {

// Multiplier i (0..N-1) of table d: odd, and at most (2^63-1)/vocab_size so that a token
// below vocab_size times it cannot overflow.
[[nodiscard]] std::int64_t qwen4exp_multiplier(std::int64_t seed, std::int64_t ple_index, int i,
                                               std::int64_t vocab_size);

// Not final: a family that differs only in its keys' names builds on it.
class Qwen4ExpFamily : public Family {
 public:
  [[nodiscard]] const char* name() const override { return "qwen4exp"; }
  [[nodiscard]] const char* title() const override { return "Qwen4Exp"; }
  [[nodiscard]] const char* layers_key() const override { return "ple_layer_ids"; }
  [[nodiscard]] int first_layer_id() const override { return 1; }
  void read(const detail::ConfigReader& reader, ModelConfig& config) const override;
  void write(const ModelConfig& config, nlohmann::json& json) const override;
  [[nodiscard]] std::vector<TableSpec> tables(const ModelConfig& config) const override;
  [[nodiscard]] bool hashes_through_token_map() const override { return false; }
  [[nodiscard]] bool short_contexts() const override { return false; }
};

}  // namespace pleshard
