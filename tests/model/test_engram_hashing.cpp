// DeepSeek Engram hashing (docs/design.md §10) through the one hashing core, against a scalar
// reference written here from the text: random configs (orders 2-5, 1-8 heads, scalar and
// per-order vocab sizes, pad ids, compressed vocabularies with random token maps, dead
// tokens), contexts of every length, and chunked processing equal to whole.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "hash/ngram_ids.hpp"
#include "hash/token_batch.hpp"
#include "model/engram_heads.hpp"
#include "model/engram_multipliers.hpp"
#include "model/model_config.hpp"
#include "model/table_spec.hpp"

namespace {

using namespace pleshard;
using nlohmann::json;

struct Case {
  ModelConfig config;
  std::vector<std::int64_t> map;  // compressed id of each token
};

Case random_case(std::mt19937_64& rng) {
  const int n = std::uniform_int_distribution<int>(2, 5)(rng);
  const int k = std::uniform_int_distribution<int>(1, 8)(rng);
  const std::int64_t vocab = std::uniform_int_distribution<std::int64_t>(2, 300)(rng);
  const std::int64_t compressed = std::uniform_int_distribution<std::int64_t>(1, vocab)(rng);
  json vocab_sizes = json::array();
  if (rng() % 2 == 0) {
    for (int i = 0; i < n - 1; ++i) vocab_sizes.push_back(std::uniform_int_distribution<int>(1, 5000)(rng));
  } else {
    vocab_sizes = std::uniform_int_distribution<int>(1, 5000)(rng);
  }
  json layers = json::array();
  for (int i = 0, count = std::uniform_int_distribution<int>(1, 3)(rng); i < count; ++i) layers.push_back(7 * i + 1);
  json document = {{"vocab_size", vocab},
                   {"num_hidden_layers", 30},
                   {"engram_layer_ids", layers},
                   {"engram_max_ngram_size", n},
                   {"engram_n_heads", k},
                   {"engram_head_dim", 32},
                   {"engram_vocab_size", vocab_sizes},
                   {"engram_pad_token_id", static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(vocab))},
                   {"engram_compressed_vocab_size", compressed}};
  if (rng() % 3 != 0) document["image_token_id"] = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(vocab));
  Case c{parse_model_config(document, "random engram config"), {}};
  // Every compressed id taken by some token, the rest at random.
  for (std::int64_t t = 0; t < vocab; ++t)
    c.map.push_back(t < compressed ? t : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(compressed)));
  std::shuffle(c.map.begin(), c.map.end(), rng);
  c.config.token_map = std::make_shared<const TokenMap>(TokenMap::from_ids(c.map, vocab, compressed, "random map"));
  return c;
}

std::int64_t python_mod(std::int64_t a, std::int64_t m) {
  const std::int64_t r = a % m;
  return r < 0 ? r + m : r;
}

// The ids of one request's tokens given up to N-1 raw tokens before it, from the text of
// §10: walking back from each token, positions before the request or at a dead token (and
// all older) are the pad id, the others their compressed id; mix of order n = XOR over s < n
// of v_s * m_s; id = floor_mod(mix, prime) + offset.
std::vector<std::int64_t> reference_ids(const Case& c, int d, const std::vector<std::int64_t>& context,
                                        const std::vector<std::int64_t>& tokens) {
  const ModelConfig& cfg = c.config;
  const int n_max = cfg.ngram_size;
  const auto heads = engram_heads({cfg.num_ple_layers(), n_max, cfg.heads_per_ngram, cfg.engram.vocab_sizes});
  const auto m = engram_multipliers(cfg.ple_layer_ids[static_cast<std::size_t>(d)], cfg.engram.compressed_vocab, n_max);
  const std::int64_t pad = c.map[static_cast<std::size_t>(cfg.engram.pad_token_id)];
  std::vector<std::int64_t> all = context;  // the raw tokens the request can see
  all.insert(all.end(), tokens.begin(), tokens.end());
  std::vector<std::int64_t> ids;
  for (std::size_t p = context.size(); p < all.size(); ++p) {
    std::vector<std::int64_t> v;
    bool blocked = false;
    for (int s = 0; s < n_max; ++s) {
      const auto at = static_cast<std::int64_t>(p) - s;
      if (at < 0) blocked = true;
      if (!blocked && all[static_cast<std::size_t>(at)] == cfg.engram.image_token_id) blocked = true;
      v.push_back(blocked ? pad : c.map[static_cast<std::size_t>(all[static_cast<std::size_t>(at)])]);
    }
    for (int order = 2; order <= n_max; ++order) {
      std::uint64_t mix = 0;
      for (int s = 0; s < order; ++s)
        mix ^= static_cast<std::uint64_t>(v[static_cast<std::size_t>(s)]) *
               static_cast<std::uint64_t>(m[static_cast<std::size_t>(s)]);
      for (int h = 0; h < cfg.heads_per_ngram; ++h) {
        const auto col = static_cast<std::size_t>((order - 2) * cfg.heads_per_ngram + h);
        const auto& layer = heads[static_cast<std::size_t>(d)];
        ids.push_back(python_mod(static_cast<std::int64_t>(mix), layer.sizes[col]) + layer.offsets[col]);
      }
    }
  }
  return ids;
}

std::int64_t random_token(std::mt19937_64& rng, const ModelConfig& cfg) {
  if (cfg.engram.image_token_id >= 0 && rng() % 6 == 0) return cfg.engram.image_token_id;
  return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(cfg.vocab_size));
}

TEST(EngramHashing, MatchesTheReferenceForEveryContextLength) {
  std::mt19937_64 rng(2026);
  for (int trial = 0; trial < 150; ++trial) {
    const Case c = random_case(rng);
    const ModelConfig& cfg = c.config;
    const auto specs = derive_table_specs(cfg);
    for (int d = 0; d < cfg.num_ple_layers(); ++d) {
      TokenBatch batch(cfg.ngram_size);
      std::vector<std::int64_t> expected;
      for (int r = 0; r < 6; ++r) {
        // Context lengths 0..N-1: a request that began that many tokens before its chunk.
        std::vector<std::int64_t> context(static_cast<std::size_t>(rng() % static_cast<std::uint64_t>(cfg.ngram_size)));
        for (auto& t : context) t = random_token(rng, cfg);
        std::vector<std::int64_t> tokens(rng() % 12);
        for (auto& t : tokens) t = random_token(rng, cfg);
        batch.add_request(tokens, context_before(cfg.ngram_size, context));
        const auto ids = reference_ids(c, d, context, tokens);
        expected.insert(expected.end(), ids.begin(), ids.end());
      }
      ASSERT_EQ(compute_ngram_ids(specs[static_cast<std::size_t>(d)], batch), expected)
          << "trial " << trial << ", table " << d;
    }
  }
}

TEST(EngramHashing, ChunkedEqualsWhole) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const Case c = random_case(rng);
    const ModelConfig& cfg = c.config;
    const TableSpec spec = derive_table_spec(cfg, 0);
    std::vector<std::int64_t> tokens(1 + rng() % 40);
    for (auto& t : tokens) t = random_token(rng, cfg);
    TokenBatch whole(cfg.ngram_size);
    whole.add_request(tokens, fresh_context(cfg.ngram_size));
    std::vector<std::int64_t> chunked;
    std::vector<std::int64_t> context = fresh_context(cfg.ngram_size);
    for (std::size_t at = 0; at < tokens.size();) {
      const std::size_t n = std::min<std::size_t>(1 + rng() % 7, tokens.size() - at);
      const std::span<const std::int64_t> chunk(tokens.data() + at, n);
      TokenBatch step(cfg.ngram_size);
      step.add_request(chunk, context);
      const auto ids = compute_ngram_ids(spec, step);
      chunked.insert(chunked.end(), ids.begin(), ids.end());
      advance_context(context, chunk);
      at += n;
    }
    ASSERT_EQ(chunked, compute_ngram_ids(spec, whole)) << "trial " << trial;
  }
}

// A dead token hashes all-pad whatever precedes it, and hides everything before it.
TEST(EngramHashing, ADeadTokenBlocksItselfAndOlderTokens) {
  std::mt19937_64 rng(5);
  Case c = random_case(rng);
  while (c.config.engram.image_token_id < 0 || c.config.ngram_size < 3) c = random_case(rng);
  const ModelConfig& cfg = c.config;
  const TableSpec spec = derive_table_spec(cfg, 0);
  const std::int64_t dead = cfg.engram.image_token_id;
  const std::int64_t other = (dead + 1) % cfg.vocab_size;
  const auto ids_of = [&](std::vector<std::int64_t> tokens) {
    TokenBatch b(cfg.ngram_size);
    b.add_request(tokens, fresh_context(cfg.ngram_size));
    const auto ids = compute_ngram_ids(spec, b);
    return std::vector<std::int64_t>(ids.end() - spec.total_heads(), ids.end());  // the last token's
  };
  EXPECT_EQ(ids_of({other, dead}), ids_of({dead}));
  EXPECT_EQ(ids_of({dead, other}), ids_of({other}));  // the dead token blocks like the request's start
}

TEST(EngramHashing, AMissingTokenMapIsRefusedWhereItMatters) {
  json document = {{"vocab_size", 100},          {"num_hidden_layers", 4},  {"engram_layer_ids", {1}},
                   {"engram_max_ngram_size", 3}, {"engram_n_heads", 2},     {"engram_head_dim", 32},
                   {"engram_vocab_size", 500},   {"engram_pad_token_id", 2}};
  // The compressed vocabulary is the vocabulary: tokens hash as themselves.
  EXPECT_NO_THROW((void)make_hash_params(derive_table_spec(parse_model_config(document, "c.json"), 0)));
  document["engram_compressed_vocab_size"] = 60;
  const TableSpec spec = derive_table_spec(parse_model_config(document, "c.json"), 0);
  try {
    (void)make_hash_params(spec);
    ADD_FAILURE() << "hashed without the token map";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("c.json: engram_compressed_vocab_size = 60 differs from vocab_size = 100"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
