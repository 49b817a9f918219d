#pragma once
// The vLLM safetensors PLE layout (read side): per-layer tensors under a prefix,
// tables split into `split_ngram_parts` row shards.

#include <memory>

#include "ckpt/ple_checkpoint.hpp"

namespace pleshard::detail {

[[nodiscard]] std::unique_ptr<PleCheckpoint> open_safetensors_checkpoint(const std::filesystem::path& path,
                                                                         const ModelConfig& config,
                                                                         const CheckpointOptions& options);

// A multi-file checkpoint's index of which file holds each tensor.
inline constexpr const char* k_index_file = "model.safetensors.index.json";

// Writes the vLLM layout into directory `path`: split_ngram_parts shards per table spread
// over `options.files` files (with model.safetensors.index.json when more than one), its
// config.json and its token map; the directory appears whole in `path`'s place, replacing an
// earlier checkpoint there (io/partial_directory.hpp).
void write_safetensors_checkpoint(const std::filesystem::path& path, const ModelConfig& config,
                                  const std::vector<TableSource>& tables, const WriteOptions& options,
                                  const std::function<void(std::uint64_t)>& progress);

// The tensor-name prefix of a decoder layer (1-based) under `pattern` ("{L}" is 0-based).
[[nodiscard]] std::string layer_prefix(const std::string& pattern, int decoder_layer);

}  // namespace pleshard::detail
