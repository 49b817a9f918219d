#include "config/model_config.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "io/file_checks.hpp"
#include "kernels/common/ngram_hash.hpp"

namespace pleshard {

namespace {

constexpr EnumNames<TableQuantization, 3> k_quantizations{{{TableQuantization::none, "none"},
                                                           {TableQuantization::fp8, "float8_e4m3fn"},
                                                           {TableQuantization::nvfp4, "nvfp4"}}};

}  // namespace

const char* to_string(TableQuantization q) { return name_of(k_quantizations, q); }

namespace {

using nlohmann::json;
// The kernels pass a layer's hash parameters by value, sized by these limits.
using kernels::k_hash_max_heads;
using kernels::k_hash_max_ngram_size;

// Looks keys up in "text_config" first, then at the top level, and reports problems
// as "<source>: <key> = <value>: <what is wrong>".
class ConfigReader {
 public:
  ConfigReader(const json& document, std::string source) : document_(document), source_(std::move(source)) {
    if (!document_.is_object()) throw InputError(source_ + ": expected a JSON object at the top level");
    if (auto it = document_.find("text_config"); it != document_.end() && !it->is_null()) {
      if (!it->is_object()) fail("text_config", *it, "must be an object");
      text_config_ = &*it;
    }
  }

  [[nodiscard]] const json* find(const char* key) const {
    if (text_config_ != nullptr) {
      if (auto it = text_config_->find(key); it != text_config_->end() && !it->is_null()) return &*it;
    }
    if (auto it = document_.find(key); it != document_.end() && !it->is_null()) return &*it;
    return nullptr;
  }

  [[noreturn]] void fail(const char* key, const json& value, const std::string& what) const {
    throw InputError(source_ + ": " + key + " = " + value.dump() + ": " + what);
  }
  [[noreturn]] void fail_missing(const char* key) const {
    throw InputError(source_ + ": required key " + key + " is missing");
  }

  [[nodiscard]] std::int64_t integer(const char* key, const json& value) const {
    if (value.is_number_integer()) {
      if (value.is_number_unsigned() &&
          value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail(key, value, "does not fit a signed 64-bit integer");
      return value.get<std::int64_t>();
    }
    fail(key, value, "must be an integer");
  }

  [[nodiscard]] std::optional<std::int64_t> optional_integer(const char* key) const {
    const json* value = find(key);
    if (value == nullptr) return std::nullopt;
    return integer(key, *value);
  }

  [[nodiscard]] std::int64_t required_integer(const char* key) const {
    const json* value = find(key);
    if (value == nullptr) fail_missing(key);
    return integer(key, *value);
  }

  [[nodiscard]] std::int64_t positive(const char* key, std::int64_t fallback) const {
    const std::int64_t v = optional_integer(key).value_or(fallback);
    if (v <= 0) fail(key, json(v), "must be positive");
    return v;
  }

  [[nodiscard]] const std::string& source() const { return source_; }

 private:
  const json& document_;
  const json* text_config_ = nullptr;
  std::string source_;
};

int as_int(const ConfigReader& r, const char* key, std::int64_t v) {
  if (v > std::numeric_limits<int>::max() || v < std::numeric_limits<int>::min())
    r.fail(key, json(v), "is out of range");
  return static_cast<int>(v);
}

}  // namespace

ModelConfig parse_model_config(const json& document, const std::string& source) {
  const ConfigReader r(document, source);
  ModelConfig c;
  c.source = source;

  c.vocab_size = r.required_integer("vocab_size");
  if (c.vocab_size <= 0) r.fail("vocab_size", json(c.vocab_size), "must be positive");

  const json* eos = r.find("eos_token_id");
  if (eos == nullptr) r.fail_missing("eos_token_id");
  if (eos->is_array()) {
    if (eos->empty()) r.fail("eos_token_id", *eos, "must be an integer or a non-empty list");
    c.eos_token_id = r.integer("eos_token_id", eos->front());
  } else {
    c.eos_token_id = r.integer("eos_token_id", *eos);
  }
  if (c.eos_token_id < 0) r.fail("eos_token_id", *eos, "must be non-negative");
  if (c.eos_token_id >= c.vocab_size)
    r.fail("eos_token_id", *eos, "must be below vocab_size = " + std::to_string(c.vocab_size));

  c.num_hidden_layers = as_int(r, "num_hidden_layers", r.required_integer("num_hidden_layers"));
  if (c.num_hidden_layers <= 0) r.fail("num_hidden_layers", json(c.num_hidden_layers), "must be positive");

  const std::int64_t n = r.optional_integer("ngram_size").value_or(3);
  if (n < 2) r.fail("ngram_size", json(n), "must be >= 2");
  if (n > k_hash_max_ngram_size) r.fail("ngram_size", json(n), "must be <= " + std::to_string(k_hash_max_ngram_size));
  c.ngram_size = static_cast<int>(n);

  const std::int64_t k = r.optional_integer("heads_per_ngram").value_or(8);
  if (k <= 0) r.fail("heads_per_ngram", json(k), "must be > 0");
  if ((n - 1) * k > k_hash_max_heads)
    r.fail("heads_per_ngram", json(k),
           "gives (ngram_size - 1) * heads_per_ngram = " + std::to_string((n - 1) * k) +
               " heads, more than the supported " + std::to_string(k_hash_max_heads));
  c.heads_per_ngram = static_cast<int>(k);

  if (auto dim = r.optional_integer("ple_embed_dim")) {
    c.ple_embed_dim = *dim;
  } else if (auto hidden = r.optional_integer("hidden_size")) {
    c.ple_embed_dim = *hidden;
  } else {
    throw InputError(source + ": required key ple_embed_dim (or hidden_size) is missing");
  }
  if (c.ple_embed_dim <= 0) r.fail("ple_embed_dim", json(c.ple_embed_dim), "must be positive");
  if (c.ple_embed_dim % c.total_heads() != 0)
    r.fail(
        "ple_embed_dim", json(c.ple_embed_dim),
        "must be divisible by the total heads (ngram_size - 1) * heads_per_ngram = " + std::to_string(c.total_heads()));
  if (c.ple_embed_dim / c.total_heads() > k_max_head_dim)
    r.fail("ple_embed_dim", json(c.ple_embed_dim),
           "gives rows of " + std::to_string(c.ple_embed_dim / c.total_heads()) + " values, more than the supported " +
               std::to_string(k_max_head_dim));

  c.ngram_vocab_size_base = r.positive("ngram_vocab_size_base", c.ngram_vocab_size_base);
  // Head sizes are primes above the base and must stay well inside 64-bit arithmetic.
  if (c.ngram_vocab_size_base > k_max_ngram_vocab_size_base)
    r.fail("ngram_vocab_size_base", json(c.ngram_vocab_size_base),
           "must be at most 2^62 = " + std::to_string(k_max_ngram_vocab_size_base));
  c.vocab_size_divisor = r.positive("make_ngram_vocab_size_divisible_by", c.vocab_size_divisor);
  c.split_ngram_parts = r.positive("split_ngram_parts", c.split_ngram_parts);
  if (c.split_ngram_parts > k_max_split_ngram_parts)
    r.fail("split_ngram_parts", json(c.split_ngram_parts),
           "must be at most " + std::to_string(k_max_split_ngram_parts) + " shards per table");
  c.seed = r.optional_integer("seed").value_or(c.seed);

  const json* ids = r.find("ple_layer_ids");
  if (ids == nullptr) r.fail_missing("ple_layer_ids");
  if (!ids->is_array() || ids->empty()) r.fail("ple_layer_ids", *ids, "must be a non-empty list of integers");
  for (const json& id : *ids) {
    const std::int64_t layer = r.integer("ple_layer_ids", id);
    if (layer < 1 || layer > c.num_hidden_layers)
      r.fail("ple_layer_ids", *ids,
             "entry " + std::to_string(layer) + " is outside 1..num_hidden_layers = 1.." +
                 std::to_string(c.num_hidden_layers));
    c.ple_layer_ids.push_back(static_cast<int>(layer));
  }
  std::sort(c.ple_layer_ids.begin(), c.ple_layer_ids.end());
  c.ple_layer_ids.erase(std::unique(c.ple_layer_ids.begin(), c.ple_layer_ids.end()), c.ple_layer_ids.end());

  if (const json* dtype = r.find("ple_embedding_dtype")) {
    if (!dtype->is_string()) r.fail("ple_embedding_dtype", *dtype, "must be \"float8_e4m3fn\", \"nvfp4\" or absent");
    const auto quantization = find_value(k_quantizations, dtype->get_ref<const std::string&>());
    if (!quantization || *quantization == TableQuantization::none)
      r.fail("ple_embedding_dtype", *dtype, "unknown dtype; expected \"float8_e4m3fn\", \"nvfp4\" or absent");
    c.quantization = *quantization;
  }
  if (c.quantization == TableQuantization::nvfp4 && c.head_dim() % 16 != 0)
    r.fail("ple_embedding_dtype", json("nvfp4"),
           "needs head_dim = ple_embed_dim / heads = " + std::to_string(c.head_dim()) + " to be a multiple of 16");
  return c;
}

ModelConfig load_model_config(const std::filesystem::path& path) {
  require_regular_file(path, "config");
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open config file");
  json document;
  try {
    document = json::parse(in);
  } catch (const json::exception& e) {
    throw InputError(path.string() + ": not valid JSON: " + e.what());
  }
  return parse_model_config(document, path.string());
}

nlohmann::json to_json(const ModelConfig& c) {
  json j = {{"vocab_size", c.vocab_size},
            {"eos_token_id", c.eos_token_id},
            {"num_hidden_layers", c.num_hidden_layers},
            {"ngram_size", c.ngram_size},
            {"heads_per_ngram", c.heads_per_ngram},
            {"ple_embed_dim", c.ple_embed_dim},
            {"ngram_vocab_size_base", c.ngram_vocab_size_base},
            {"make_ngram_vocab_size_divisible_by", c.vocab_size_divisor},
            {"split_ngram_parts", c.split_ngram_parts},
            {"seed", c.seed},
            {"ple_layer_ids", c.ple_layer_ids}};
  if (c.quantization != TableQuantization::none) j["ple_embedding_dtype"] = to_string(c.quantization);
  return j;
}

std::string model_family(const ModelConfig& /*config*/) { return "qwen4exp"; }

}  // namespace pleshard
