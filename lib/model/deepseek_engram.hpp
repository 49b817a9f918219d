#pragma once
// DeepSeek-V4.1's Engram tables (docs/design.md §10): `engram_layer_ids` (0-based, in config
// order), orders 2..engram_max_ngram_size with engram_n_heads heads each, tokens hashed
// through a token map into a compressed vocabulary, multipliers drawn by NumPy's generator
// seeded by the layer id, one prime per head of the whole model, positions before a request
// or at and past a dead token (image_token_id) hashed as the pad id; rows FP8 with one E8M0
// scale per 32 values (or BF16), one `layers.{L}.engram.embed` tensor per layer.

#include "model/model_family.hpp"

namespace pleshard {

class DeepseekEngramFamily final : public Family {
 public:
  [[nodiscard]] const char* name() const override { return "deepseek_engram"; }
  [[nodiscard]] const char* title() const override { return "DeepSeek Engram"; }
  [[nodiscard]] const char* layers_key() const override { return "engram_layer_ids"; }
  [[nodiscard]] int first_layer_id() const override { return 0; }
  void read(const detail::ConfigReader& reader, ModelConfig& config) const override;
  void write(const ModelConfig& config, nlohmann::json& json) const override;
  [[nodiscard]] std::vector<TableSpec> tables(const ModelConfig& config) const override;
  [[nodiscard]] bool hashes_through_token_map() const override { return true; }
  [[nodiscard]] bool short_contexts() const override { return true; }
};

}  // namespace pleshard
