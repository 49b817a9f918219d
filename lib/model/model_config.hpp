#pragma once
// The model configuration pleshard needs, read from a Hugging Face style config.json (keys at
// the top level or inside "text_config"). A config names its model family by its keys:
// `ple_layer_ids` is Qwen4Exp's per-layer embedding (model/qwen4exp.hpp), `engram_layer_ids`
// DeepSeek's Engram (model/deepseek_engram.hpp); each family reads its own keys and derives
// its tables (model/table_spec.hpp). The fields every family fills are the shape the rest of
// pleshard works with: tables of H = (N - 1) * K columns of head_dim values.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/token_map.hpp"

namespace pleshard {

// Limits that keep every row, head and byte count of a table inside 64-bit arithmetic.
inline constexpr std::int64_t k_max_head_dim = std::int64_t{1} << 20;
inline constexpr std::int64_t k_max_ngram_vocab_size_base = std::int64_t{1} << 62;
inline constexpr std::int64_t k_max_split_ngram_parts = std::int64_t{1} << 20;

// A model family: an id into the registry of families (model/model_family.hpp), the
// built-in ones first, then any registered beside them.
class ModelFamily {
 public:
  static const ModelFamily qwen4exp;
  static const ModelFamily deepseek_engram;

  [[nodiscard]] constexpr int id() const { return id_; }
  [[nodiscard]] static constexpr ModelFamily of_id(int id) { return ModelFamily(id); }
  constexpr bool operator==(const ModelFamily&) const = default;

 private:
  explicit constexpr ModelFamily(int id) : id_(id) {}
  int id_ = 0;
};
inline constexpr ModelFamily ModelFamily::qwen4exp{0};
inline constexpr ModelFamily ModelFamily::deepseek_engram{1};

// How a checkpoint of the config stores rows (Qwen4Exp's "ple_embedding_dtype"; Engram's
// tables are FP8 with E8M0 block scales, or unquantized).
enum class TableQuantization { none, fp8, nvfp4, fp8_e8m0 };

[[nodiscard]] const char* to_string(TableQuantization q);
[[nodiscard]] TableQuantization parse_table_quantization(std::string_view name);
[[nodiscard]] const char* to_string(ModelFamily family);  // the family's name: "qwen4exp", "deepseek_engram", ...

// DeepSeek Engram's own keys (docs/design.md §10).
struct EngramKeys {
  std::vector<std::int64_t> vocab_sizes;     // engram_vocab_size: one for every order, or N - 1
  std::int64_t pad_token_id = 0;             // engram_pad_token_id
  std::int64_t compressed_vocab = 0;         // engram_compressed_vocab_size, C
  std::vector<std::int64_t> num_embeddings;  // engram_num_embeddings: one, or one per layer; empty: absent
  std::int64_t image_token_id = -1;          // a dead token; -1: none
};

struct ModelConfig {
  std::string source;          // file the config was read from, for messages
  std::filesystem::path file;  // the config.json read (load_model_config); empty for a checkpoint's own
  ModelFamily family = ModelFamily::qwen4exp;

  // Every family.
  std::int64_t vocab_size = 0;
  int num_hidden_layers = 0;       // 0: not given (a family may not need it)
  int ngram_size = 3;              // N: orders 2..N are hashed
  int heads_per_ngram = 8;         // K: heads per order
  std::int64_t ple_embed_dim = 0;  // values per token and table: H * head_dim
  // The decoder layer of each table, in table order (d): Qwen4Exp's 1-based ids sorted,
  // Engram's 0-based ids as the config lists them.
  std::vector<int> ple_layer_ids;
  TableQuantization quantization = TableQuantization::none;

  // Qwen4Exp.
  std::int64_t eos_token_id = 0;
  std::int64_t ngram_vocab_size_base = 20'000'000;
  std::int64_t vocab_size_divisor = 128;  // make_ngram_vocab_size_divisible_by
  std::int64_t split_ngram_parts = 512;
  std::int64_t seed = 1234;

  // DeepSeek Engram.
  EngramKeys engram;
  // The compressed id of each token, where the family hashes through one (Engram); null
  // where the family has none, or where none was found (hashing is then refused unless the
  // compressed vocabulary is the vocabulary).
  std::shared_ptr<const TokenMap> token_map;

  // Total hash heads H = (N - 1) * K.
  [[nodiscard]] int total_heads() const { return (ngram_size - 1) * heads_per_ngram; }
  // Values per table row = ple_embed_dim / H.
  [[nodiscard]] int head_dim() const { return static_cast<int>(ple_embed_dim / total_heads()); }
  [[nodiscard]] int num_ple_layers() const { return static_cast<int>(ple_layer_ids.size()); }
};

// Parses and validates; throws InputError("<source>: <key> ...") on the first problem.
[[nodiscard]] ModelConfig parse_model_config(const nlohmann::json& document, const std::string& source);

// Reads a config.json file, with no token map; a missing file or malformed JSON is an
// InputError too.
[[nodiscard]] ModelConfig read_model_config(const std::filesystem::path& path);

// read_model_config for a model without a checkpoint (ckpt make, synthetic tables): the
// token map read from `token_map` when given, else found beside the config (find_token_map).
// A checkpoint's config takes its map by the checkpoint's rule (ckpt/checkpoint_token_map.hpp).
[[nodiscard]] ModelConfig load_model_config(const std::filesystem::path& path,
                                            const std::filesystem::path& token_map = {});

// The name of the token map a family looks for beside its config and in a checkpoint.
inline constexpr const char* k_token_map_file = "engram_token_map.npy";

// Reads the token map at `path` (--token-map) into `config`, checked against its
// vocabulary; InputError naming the file, or for a family that hashes through none.
void use_token_map(ModelConfig& config, const std::filesystem::path& path);

// Where the family hashes through a token map and none is set yet: reads
// k_token_map_file from `dir` if it is there.
void find_token_map(ModelConfig& config, const std::filesystem::path& dir);

// The files the model was read from (config.json, the token map's .npy): inputs that no
// command's output may replace.
[[nodiscard]] std::vector<std::filesystem::path> model_files(const ModelConfig& config);

// The token map's digest (TokenMap::sha256), or "" where the config hashes through none.
[[nodiscard]] std::string token_map_sha256(const ModelConfig& config);

// "<source> (sha256 <digest>)", "none (tokens hash as themselves)" where the family hashes
// through a map and none is set, or "" where the family hashes through none: which map a
// command uses, for inspect and the report.
[[nodiscard]] std::string describe_token_map(const ModelConfig& config);

// The config as a canonical JSON object (the family's keys, top level), for checkpoints.
[[nodiscard]] nlohmann::json to_json(const ModelConfig& config);

}  // namespace pleshard
