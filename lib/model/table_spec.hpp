#pragma once
// One table of a model as the rest of pleshard needs it, derived once from the config by
// the model's family: its hashing (fill rule, token map, multipliers, prime head sizes and
// offsets), its rows (logical, padded, per checkpoint shard) and where a checkpoint keeps
// it. The engine, the stores, the checkpoints and the jobs take these, never a family's keys.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/ngram_hash.hpp"
#include "model/model_config.hpp"

namespace pleshard {

// How a safetensors checkpoint names and splits a family's tables.
enum class TensorLayout {
  // vLLM's PLE layout: `<prefix>.ngram_embedding.shard_{i}.weight` (+ `.weight_scale` for
  // NVFP4), a global scale and optional hash buffers, under a per-layer prefix.
  vllm_ple_shards,
  // DeepSeek's released Engram layout: one `...layers.{L}.engram.embed.weight` per layer
  // and its `.scale` block scales, in any shard, beside unrelated tensors.
  engram_embed,
};

struct TableSpec {
  int ple_index = 0;      // d: the table's position, as --ple-index and /ple_{d}
  int decoder_layer = 0;  // the family's decoder layer id (Qwen4Exp: 1-based; Engram: 0-based)
  // The decoder layer that reads the table, 0-based in every family: how many decoder layers
  // run before its rows are needed (the automatic placement's deadline). decoder_layer stays
  // the family's own id, which its checkpoints' names use.
  int read_at_layer = 0;
  int ngram_size = 0;
  int heads_per_ngram = 0;
  int head_dim = 0;
  kernels::NgramFill fill;
  std::shared_ptr<const TokenMap> token_map;  // null: tokens hash as themselves
  std::string unhashable;                     // why hashing is refused (a token map not found); empty: it is not
  std::vector<std::int64_t> multipliers;      // N entries
  std::vector<std::int64_t> head_sizes;       // H primes
  std::vector<std::int64_t> head_offsets;     // running sums of head_sizes
  std::int64_t logical_rows = 0;              // sum of head_sizes
  std::int64_t padded_rows = 0;               // the rows a checkpoint stores
  std::int64_t shard_rows = 0;                // rows per checkpoint shard (the whole table: one shard)
  TensorLayout tensors = TensorLayout::vllm_ple_shards;

  [[nodiscard]] int total_heads() const { return static_cast<int>(head_sizes.size()); }
};

// Specs of every table, in table order, from the config's family.
[[nodiscard]] std::vector<TableSpec> derive_table_specs(const ModelConfig& config);

// The spec of one table (throws InputError when out of range).
[[nodiscard]] TableSpec derive_table_spec(const ModelConfig& config, int ple_index);

// The kernels' by-value parameter block for one table, its token map in host memory; an
// InputError (spec.unhashable) for a table that cannot be hashed.
[[nodiscard]] kernels::NgramHashParams make_hash_params(const TableSpec& spec);

// Offsets (running sums) of head sizes; InputError naming `what` past 2^63 rows.
[[nodiscard]] std::vector<std::int64_t> head_offsets_of(const std::vector<std::int64_t>& sizes,
                                                        const std::string& what);

}  // namespace pleshard
