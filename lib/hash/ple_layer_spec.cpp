#include "hash/ple_layer_spec.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace pleshard {

namespace {

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// Fills the derived fields of `spec` from the config, given head sizes already set.
void finish_spec(const ModelConfig& config, PleLayerSpec& spec) {
  std::int64_t offset = 0;
  spec.head_offsets.clear();
  for (std::int64_t size : spec.head_sizes) {
    spec.head_offsets.push_back(offset);
    if (offset > std::numeric_limits<std::int64_t>::max() - size)
      throw InputError(config.source + ": ngram_vocab_size_base = " + std::to_string(config.ngram_vocab_size_base) +
                       " makes a table larger than 2^63 rows");
    offset += size;
  }
  spec.logical_rows = offset;
  if (offset > std::numeric_limits<std::int64_t>::max() - (config.vocab_size_divisor - 1))
    throw InputError(config.source +
                     ": make_ngram_vocab_size_divisible_by = " + std::to_string(config.vocab_size_divisor) +
                     " pads the table's " + std::to_string(offset) + " rows past 2^63");
  spec.padded_rows = round_up(offset, config.vocab_size_divisor);
  // Every byte count of the table (rows x at most 4 bytes per value) stays inside 2^62.
  const std::int64_t widest_row = 4 * static_cast<std::int64_t>(config.head_dim());
  if (spec.padded_rows > (std::int64_t{1} << 62) / std::max<std::int64_t>(1, widest_row))
    throw InputError(config.source + ": ngram_vocab_size_base = " + std::to_string(config.ngram_vocab_size_base) +
                     " makes a table of " + std::to_string(spec.padded_rows) + " rows of " +
                     std::to_string(config.head_dim()) + " values, more than 2^62 bytes");
  // ceil(padded / parts), written so that it cannot overflow
  spec.shard_rows = spec.padded_rows == 0 ? 0 : (spec.padded_rows - 1) / config.split_ngram_parts + 1;
}

PleLayerSpec base_spec(const ModelConfig& config, int ple_index) {
  PleLayerSpec spec;
  spec.ple_index = ple_index;
  spec.decoder_layer = config.ple_layer_ids.at(static_cast<std::size_t>(ple_index));
  spec.ngram_size = config.ngram_size;
  spec.heads_per_ngram = config.heads_per_ngram;
  spec.head_dim = config.head_dim();
  spec.eos_token_id = config.eos_token_id;
  for (int i = 0; i < config.ngram_size; ++i)
    spec.multipliers.push_back(kernels::layer_multiplier(config.seed, ple_index, i, config.vocab_size));
  return spec;
}

}  // namespace

std::vector<PleLayerSpec> derive_layer_specs(const ModelConfig& config) {
  const int heads = config.total_heads();
  std::vector<PleLayerSpec> specs;
  // Head g = d*H + h takes the (g+1)-th prime >= base: walk the primes once, in order.
  std::uint64_t prime = static_cast<std::uint64_t>(config.ngram_vocab_size_base) - 1;
  for (int d = 0; d < config.num_ple_layers(); ++d) {
    PleLayerSpec spec = base_spec(config, d);
    for (int h = 0; h < heads; ++h) {
      prime = kernels::next_prime_above(prime);
      spec.head_sizes.push_back(static_cast<std::int64_t>(prime));
    }
    finish_spec(config, spec);
    specs.push_back(std::move(spec));
  }
  return specs;
}

PleLayerSpec derive_layer_spec(const ModelConfig& config, int ple_index) {
  if (ple_index < 0 || ple_index >= config.num_ple_layers())
    throw InputError(config.source + ": PLE index " + std::to_string(ple_index) + " is out of range; the config has " +
                     std::to_string(config.num_ple_layers()) + " PLE layers (0.." +
                     std::to_string(config.num_ple_layers() - 1) + ")");
  return derive_layer_specs(config).at(static_cast<std::size_t>(ple_index));
}

kernels::NgramHashParams make_hash_params(const PleLayerSpec& spec) {
  kernels::NgramHashParams params;
  params.ngram_size = spec.ngram_size;
  params.heads_per_ngram = spec.heads_per_ngram;
  params.eos_token_id = spec.eos_token_id;
  for (std::size_t i = 0; i < spec.multipliers.size(); ++i) params.multipliers[i] = spec.multipliers[i];
  for (std::size_t h = 0; h < spec.head_sizes.size(); ++h) {
    params.head_sizes[h] = spec.head_sizes[h];
    params.head_offsets[h] = spec.head_offsets[h];
    params.head_reciprocals[h] = kernels::modulus_reciprocal(static_cast<std::uint64_t>(spec.head_sizes[h]));
  }
  return params;
}

}  // namespace pleshard
