#include "model/qwen4exp.hpp"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/enum_names.hpp"
#include "core/error.hpp"

namespace pleshard {

namespace {

using nlohmann::json;

constexpr std::uint64_t k_layer_prime = 10007;

constexpr EnumNames<TableQuantization, 2> k_dtypes{
    {{TableQuantization::fp8, "float8_e4m3fn"}, {TableQuantization::nvfp4, "nvfp4"}}};

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

std::int64_t qwen4exp_multiplier(std::int64_t seed, std::int64_t ple_index, int i, std::int64_t vocab_size) {
  const std::uint64_t max_multiplier = 0x7FFFFFFFFFFFFFFFull / static_cast<std::uint64_t>(vocab_size);
  const std::uint64_t half = max_multiplier / 2 > 1 ? max_multiplier / 2 : 1;
  const std::uint64_t value = static_cast<std::uint64_t>(seed) + k_layer_prime * static_cast<std::uint64_t>(ple_index) +
                              kernels::k_splitmix_gamma * static_cast<std::uint64_t>(i + 1);
  return static_cast<std::int64_t>(2 * (kernels::splitmix64(value) % half) + 1);
}

void Qwen4ExpFamily::read(const detail::ConfigReader& r, ModelConfig& c) const {
  const std::string& source = r.source();
  if (c.num_hidden_layers == 0) r.fail_missing("num_hidden_layers");
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

  const std::int64_t n = r.optional_integer("ngram_size").value_or(3);
  if (n < 2) r.fail("ngram_size", json(n), "must be >= 2");
  if (n > kernels::k_hash_max_ngram_size)
    r.fail("ngram_size", json(n), "must be <= " + std::to_string(kernels::k_hash_max_ngram_size));
  c.ngram_size = static_cast<int>(n);

  const std::int64_t k = r.optional_integer("heads_per_ngram").value_or(8);
  if (k <= 0) r.fail("heads_per_ngram", json(k), "must be > 0");
  if ((n - 1) * k > kernels::k_hash_max_heads)
    r.fail("heads_per_ngram", json(k),
           "gives (ngram_size - 1) * heads_per_ngram = " + std::to_string((n - 1) * k) +
               " heads, more than the supported " + std::to_string(kernels::k_hash_max_heads));
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

  const char* ids_key = layers_key();  // a family built on this one may name it otherwise
  const json* ids = r.find(ids_key);
  if (!ids->is_array() || ids->empty()) r.fail(ids_key, *ids, "must be a non-empty list of integers");
  for (const json& id : *ids) {
    const std::int64_t layer = r.integer(ids_key, id);
    if (layer < 1 || layer > c.num_hidden_layers)
      r.fail(ids_key, *ids,
             "entry " + std::to_string(layer) + " is outside 1..num_hidden_layers = 1.." +
                 std::to_string(c.num_hidden_layers));
    c.ple_layer_ids.push_back(static_cast<int>(layer));
  }
  std::sort(c.ple_layer_ids.begin(), c.ple_layer_ids.end());
  c.ple_layer_ids.erase(std::unique(c.ple_layer_ids.begin(), c.ple_layer_ids.end()), c.ple_layer_ids.end());

  if (const json* dtype = r.find("ple_embedding_dtype")) {
    if (!dtype->is_string()) r.fail("ple_embedding_dtype", *dtype, "must be \"float8_e4m3fn\", \"nvfp4\" or absent");
    const auto quantization = find_value(k_dtypes, dtype->get_ref<const std::string&>());
    if (!quantization)
      r.fail("ple_embedding_dtype", *dtype, "unknown dtype; expected \"float8_e4m3fn\", \"nvfp4\" or absent");
    c.quantization = *quantization;
  }
  if (c.quantization == TableQuantization::nvfp4 && c.head_dim() % 16 != 0)
    r.fail("ple_embedding_dtype", json("nvfp4"),
           "needs head_dim = ple_embed_dim / heads = " + std::to_string(c.head_dim()) + " to be a multiple of 16");
}

void Qwen4ExpFamily::write(const ModelConfig& c, json& j) const {
  j.update({{"eos_token_id", c.eos_token_id},
            {"ngram_size", c.ngram_size},
            {"heads_per_ngram", c.heads_per_ngram},
            {"ple_embed_dim", c.ple_embed_dim},
            {"ngram_vocab_size_base", c.ngram_vocab_size_base},
            {"make_ngram_vocab_size_divisible_by", c.vocab_size_divisor},
            {"split_ngram_parts", c.split_ngram_parts},
            {"seed", c.seed},
            {layers_key(), c.ple_layer_ids}});
  if (c.quantization != TableQuantization::none) j["ple_embedding_dtype"] = to_string(c.quantization);
}

std::vector<TableSpec> Qwen4ExpFamily::tables(const ModelConfig& config) const {
  const int heads = config.total_heads();
  std::vector<TableSpec> specs;
  // Head g = d*H + h takes the (g+1)-th prime >= base: walk the primes once, in order.
  std::uint64_t prime = static_cast<std::uint64_t>(config.ngram_vocab_size_base) - 1;
  for (int d = 0; d < config.num_ple_layers(); ++d) {
    TableSpec spec;
    spec.ple_index = d;
    spec.decoder_layer = config.ple_layer_ids.at(static_cast<std::size_t>(d));
    spec.read_at_layer = spec.decoder_layer - 1;  // ple_layer_ids are 1-based
    spec.ngram_size = config.ngram_size;
    spec.heads_per_ngram = config.heads_per_ngram;
    spec.head_dim = config.head_dim();
    spec.fill = {config.eos_token_id, config.eos_token_id, 1};
    for (int i = 0; i < config.ngram_size; ++i)
      spec.multipliers.push_back(qwen4exp_multiplier(config.seed, d, i, config.vocab_size));
    for (int h = 0; h < heads; ++h) {
      prime = kernels::next_prime_above(prime);
      spec.head_sizes.push_back(static_cast<std::int64_t>(prime));
    }
    const std::string what =
        config.source + ": ngram_vocab_size_base = " + std::to_string(config.ngram_vocab_size_base);
    spec.head_offsets = head_offsets_of(spec.head_sizes, what);
    spec.logical_rows = spec.head_offsets.empty() ? 0 : spec.head_offsets.back() + spec.head_sizes.back();
    if (spec.logical_rows > std::numeric_limits<std::int64_t>::max() - (config.vocab_size_divisor - 1))
      throw InputError(config.source +
                       ": make_ngram_vocab_size_divisible_by = " + std::to_string(config.vocab_size_divisor) +
                       " pads the table's " + std::to_string(spec.logical_rows) + " rows past 2^63");
    spec.padded_rows = round_up(spec.logical_rows, config.vocab_size_divisor);
    // Every byte count of the table (rows x at most 4 bytes per value) stays inside 2^62.
    const std::int64_t widest_row = 4 * static_cast<std::int64_t>(config.head_dim());
    if (spec.padded_rows > (std::int64_t{1} << 62) / std::max<std::int64_t>(1, widest_row))
      throw InputError(what + " makes a table of " + std::to_string(spec.padded_rows) + " rows of " +
                       std::to_string(config.head_dim()) + " values, more than 2^62 bytes");
    // ceil(padded / parts), written so that it cannot overflow
    spec.shard_rows = spec.padded_rows == 0 ? 0 : (spec.padded_rows - 1) / config.split_ngram_parts + 1;
    spec.tensors = TensorLayout::vllm_ple_shards;
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace pleshard
