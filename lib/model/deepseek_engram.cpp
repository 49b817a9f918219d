#include "model/deepseek_engram.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/option_names.hpp"
#include "model/engram_heads.hpp"
#include "model/engram_multipliers.hpp"

namespace pleshard {

namespace {

using nlohmann::json;

// E8M0 scales cover blocks of this many values of a row.
constexpr int k_scale_block = 32;

}  // namespace

void DeepseekEngramFamily::read(const detail::ConfigReader& r, ModelConfig& c) const {
  const json* ids = r.find("engram_layer_ids");
  if (!ids->is_array() || ids->empty()) r.fail("engram_layer_ids", *ids, "must be a non-empty list of integers");
  for (const json& id : *ids) {
    const std::int64_t layer = r.integer("engram_layer_ids", id);
    if (layer < 0 || (c.num_hidden_layers > 0 && layer >= c.num_hidden_layers) || layer > (1 << 20))
      r.fail("engram_layer_ids", *ids,
             "entry " + std::to_string(layer) + " is not a 0-based decoder layer" +
                 (c.num_hidden_layers > 0 ? " below num_hidden_layers = " + std::to_string(c.num_hidden_layers) : ""));
    if (std::find(c.ple_layer_ids.begin(), c.ple_layer_ids.end(), layer) != c.ple_layer_ids.end())
      r.fail("engram_layer_ids", *ids, "lists layer " + std::to_string(layer) + " twice");
    c.ple_layer_ids.push_back(static_cast<int>(layer));
  }

  c.ngram_size = r.bounded_int("engram_max_ngram_size", r.required_integer("engram_max_ngram_size"), 2,
                               kernels::k_hash_max_ngram_size);
  c.heads_per_ngram = r.bounded_int("engram_n_heads", r.required_integer("engram_n_heads"), 1,
                                    kernels::k_hash_max_heads / (c.ngram_size - 1));
  const std::int64_t head_dim = r.required_integer("engram_head_dim");
  if (head_dim < k_scale_block || head_dim > k_max_head_dim || head_dim % k_scale_block != 0)
    r.fail("engram_head_dim", json(head_dim),
           "must be a multiple of " + std::to_string(k_scale_block) + " (one E8M0 scale per " +
               std::to_string(k_scale_block) + " values) up to " + std::to_string(k_max_head_dim));
  c.ple_embed_dim = head_dim * c.total_heads();
  c.quantization = TableQuantization::fp8_e8m0;

  const json* vocab = r.find("engram_vocab_size");
  if (vocab == nullptr) r.fail_missing("engram_vocab_size");
  if (vocab->is_array()) {
    if (static_cast<int>(vocab->size()) != c.ngram_size - 1)
      r.fail("engram_vocab_size", *vocab,
             "must list one size per order 2.." + std::to_string(c.ngram_size) + " (" +
                 std::to_string(c.ngram_size - 1) + " sizes), or be one integer");
    for (const json& v : *vocab) c.engram.vocab_sizes.push_back(r.integer("engram_vocab_size", v));
  } else {
    c.engram.vocab_sizes.push_back(r.integer("engram_vocab_size", *vocab));
  }
  for (const std::int64_t v : c.engram.vocab_sizes)
    if (v < 1 || v > k_max_ngram_vocab_size_base) r.fail("engram_vocab_size", *vocab, "sizes must be in 1..2^62");

  c.engram.compressed_vocab = r.optional_integer("engram_compressed_vocab_size").value_or(c.vocab_size);
  if (c.engram.compressed_vocab < 1 || c.engram.compressed_vocab > c.vocab_size)
    r.fail("engram_compressed_vocab_size", json(c.engram.compressed_vocab),
           "must be in 1..vocab_size = 1.." + std::to_string(c.vocab_size));
  c.engram.pad_token_id = r.required_integer("engram_pad_token_id");
  if (c.engram.pad_token_id < 0 || c.engram.pad_token_id >= c.vocab_size)
    r.fail("engram_pad_token_id", json(c.engram.pad_token_id),
           "must be a token id below vocab_size = " + std::to_string(c.vocab_size));
  if (const auto image = r.optional_integer("image_token_id")) {
    if (*image < 0 || *image >= c.vocab_size)
      r.fail("image_token_id", json(*image), "must be a token id below vocab_size = " + std::to_string(c.vocab_size));
    c.engram.image_token_id = *image;
  }
  if (const json* rows = r.find("engram_num_embeddings")) {
    // One count for every layer, or one per layer: checked against the derived rows.
    const std::size_t n = rows->is_array() ? rows->size() : 1;
    if (rows->is_array() && n != c.ple_layer_ids.size())
      r.fail("engram_num_embeddings", *rows, "must be one integer, or one per engram layer");
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t v = r.integer("engram_num_embeddings", rows->is_array() ? (*rows)[i] : *rows);
      if (v < 1) r.fail("engram_num_embeddings", *rows, "counts must be positive");
      c.engram.num_embeddings.push_back(v);
    }
  }
}

void DeepseekEngramFamily::write(const ModelConfig& c, json& j) const {
  const EngramKeys& e = c.engram;
  j.update({{"engram_layer_ids", c.ple_layer_ids},
            {"engram_max_ngram_size", c.ngram_size},
            {"engram_n_heads", c.heads_per_ngram},
            {"engram_head_dim", c.head_dim()},
            {"engram_pad_token_id", e.pad_token_id},
            {"engram_compressed_vocab_size", e.compressed_vocab}});
  j["engram_vocab_size"] = e.vocab_sizes.size() == 1 ? json(e.vocab_sizes.front()) : json(e.vocab_sizes);
  if (e.image_token_id >= 0) j["image_token_id"] = e.image_token_id;
  if (!e.num_embeddings.empty())
    j["engram_num_embeddings"] = e.num_embeddings.size() == 1 ? json(e.num_embeddings.front()) : json(e.num_embeddings);
}

std::vector<TableSpec> DeepseekEngramFamily::tables(const ModelConfig& c) const {
  const EngramKeys& e = c.engram;
  const std::vector<EngramHeads> heads =
      engram_heads({c.num_ple_layers(), c.ngram_size, c.heads_per_ngram, e.vocab_sizes});
  // Without a map, tokens hash as themselves: right only where the compressed vocabulary
  // is the vocabulary.
  std::string unhashable;
  if (c.token_map == nullptr && e.compressed_vocab != c.vocab_size)
    unhashable = c.source + ": engram_compressed_vocab_size = " + std::to_string(e.compressed_vocab) +
                 " differs from vocab_size = " + std::to_string(c.vocab_size) + ": hashing needs the token map (" +
                 k_token_map_file + " beside the config or the checkpoint, or " +
                 option_with(Option::token_map, "FILE") + ")";
  const std::int64_t pad = c.token_map != nullptr ? c.token_map->compressed_id(e.pad_token_id) : e.pad_token_id;
  std::vector<TableSpec> specs;
  for (int d = 0; d < c.num_ple_layers(); ++d) {
    TableSpec spec;
    spec.ple_index = d;
    spec.decoder_layer = c.ple_layer_ids[static_cast<std::size_t>(d)];
    spec.read_at_layer = spec.decoder_layer;  // engram_layer_ids are 0-based
    spec.ngram_size = c.ngram_size;
    spec.heads_per_ngram = c.heads_per_ngram;
    spec.head_dim = c.head_dim();
    spec.fill = {pad, e.image_token_id >= 0 ? e.image_token_id : kernels::k_no_blocking_token, 0};
    spec.token_map = c.token_map;
    spec.unhashable = unhashable;
    spec.multipliers = engram_multipliers(spec.decoder_layer, e.compressed_vocab, c.ngram_size);
    const EngramHeads& h = heads[static_cast<std::size_t>(d)];
    spec.head_sizes = h.sizes;
    spec.head_offsets = h.offsets;
    spec.logical_rows = spec.padded_rows = spec.shard_rows = h.rows;
    if (!e.num_embeddings.empty()) {
      const std::int64_t expected = e.num_embeddings[e.num_embeddings.size() == 1 ? 0 : static_cast<std::size_t>(d)];
      if (expected != h.rows)
        throw InputError(c.source + ": engram_num_embeddings = " + std::to_string(expected) + " for layer " +
                         std::to_string(spec.decoder_layer) + ", but its heads derive " + std::to_string(h.rows) +
                         " rows from engram_vocab_size; engram_num_embeddings only checks that count: remove it "
                         "from a config whose engram_vocab_size was changed (or set it to what the heads derive)");
    }
    // Every byte count of the table stays inside 2^62 (rows x at most 4 bytes per value).
    if (spec.padded_rows > (std::int64_t{1} << 62) / (4 * static_cast<std::int64_t>(spec.head_dim)))
      throw InputError(c.source + ": engram_vocab_size makes a table of " + std::to_string(spec.padded_rows) +
                       " rows, more than 2^62 bytes");
    spec.tensors = TensorLayout::engram_embed;
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace pleshard
