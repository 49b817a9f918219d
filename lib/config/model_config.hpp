#pragma once
// The model configuration pleshard needs, read from a Hugging Face style config.json
// (keys at the top level or inside "text_config"), with DESIGN.md §1 defaults and checks.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace pleshard {

// Limits that keep every row, head and byte count of a table inside 64-bit arithmetic.
inline constexpr std::int64_t k_max_head_dim = std::int64_t{1} << 20;
inline constexpr std::int64_t k_max_ngram_vocab_size_base = std::int64_t{1} << 62;
inline constexpr std::int64_t k_max_split_ngram_parts = std::int64_t{1} << 20;

// How the checkpoint stores a table's rows ("ple_embedding_dtype").
enum class TableQuantization { none, fp8, nvfp4 };

[[nodiscard]] const char* to_string(TableQuantization q);

struct ModelConfig {
  std::string source;  // file the config was read from, for messages

  std::int64_t vocab_size = 0;
  std::int64_t eos_token_id = 0;
  int num_hidden_layers = 0;
  int ngram_size = 3;
  int heads_per_ngram = 8;
  std::int64_t ple_embed_dim = 0;
  std::int64_t ngram_vocab_size_base = 20'000'000;
  std::int64_t vocab_size_divisor = 128;  // make_ngram_vocab_size_divisible_by
  std::int64_t split_ngram_parts = 512;
  std::int64_t seed = 1234;
  std::vector<int> ple_layer_ids;  // 1-based decoder layers, sorted and unique
  TableQuantization quantization = TableQuantization::none;

  // Total hash heads H = (N - 1) * K.
  [[nodiscard]] int total_heads() const { return (ngram_size - 1) * heads_per_ngram; }
  // Values per table row = ple_embed_dim / H.
  [[nodiscard]] int head_dim() const { return static_cast<int>(ple_embed_dim / total_heads()); }
  [[nodiscard]] int num_ple_layers() const { return static_cast<int>(ple_layer_ids.size()); }
};

// Parses and validates; throws InputError("<source>: <key> ...") on the first problem.
[[nodiscard]] ModelConfig parse_model_config(const nlohmann::json& document, const std::string& source);

// Reads a config.json file; a missing file or malformed JSON is an InputError too.
[[nodiscard]] ModelConfig load_model_config(const std::filesystem::path& path);

// The config as a canonical JSON object (the keys above, top level), for checkpoints.
[[nodiscard]] nlohmann::json to_json(const ModelConfig& config);

// The model family whose hashing and tables the config describes, as outputs name it:
// "qwen4exp", the only family so far.
[[nodiscard]] std::string model_family(const ModelConfig& config);

}  // namespace pleshard
