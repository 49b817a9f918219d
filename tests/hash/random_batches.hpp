#pragma once
// Random models and batches for hashing tests: orders 2..6, 1..8 heads per order, EOS
// anywhere (context included), empty and uneven requests, bases 2..1e9, token ids up to
// 2^63 - 1.

#include <cstdint>
#include <random>
#include <vector>

#include "hash/reference_ngram_ids.hpp"
#include "hash/token_batch.hpp"
#include "model/model_config.hpp"

namespace pleshard::testing_support {

inline ModelConfig random_config(std::mt19937_64& rng) {
  ModelConfig c;
  c.source = "random";
  c.ngram_size = std::uniform_int_distribution<int>(2, 6)(rng);
  c.heads_per_ngram = std::uniform_int_distribution<int>(1, 8)(rng);
  c.ple_embed_dim = 16 * c.total_heads();
  const std::int64_t vocabs[] = {1, 7, 1000, 151936, 200019, std::int64_t{1} << 40};
  c.vocab_size = vocabs[rng() % 6];
  c.eos_token_id = static_cast<std::int64_t>(rng() % 1000);
  const std::int64_t bases[] = {2, 3, 100, 65521, 20'000'000, 1'000'000'000};
  c.ngram_vocab_size_base = bases[rng() % 6];
  c.vocab_size_divisor = std::int64_t{1} << (rng() % 8);
  c.split_ngram_parts = 1 + static_cast<std::int64_t>(rng() % 600);
  c.seed = static_cast<std::int64_t>(rng());
  c.num_hidden_layers = 4;
  c.ple_layer_ids = {1, 2, 3, 4};
  return c;
}

inline std::int64_t random_token(std::mt19937_64& rng, const ModelConfig& c) {
  switch (rng() % 8) {
    case 0:
      return c.eos_token_id;
    case 1:
      return static_cast<std::int64_t>(rng() >> 1);  // up to 2^63 - 1
    case 2:
      return static_cast<std::int64_t>(rng() % 16);  // frequent tokens repeat
    default:
      return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c.vocab_size));
  }
}

inline std::vector<reference::Request> random_requests(std::mt19937_64& rng, const ModelConfig& c, int max_requests,
                                                       int max_tokens) {
  std::vector<reference::Request> requests(
      static_cast<std::size_t>(std::uniform_int_distribution<int>(0, max_requests)(rng)));
  for (auto& r : requests) {
    const bool fresh = rng() % 3 == 0;
    for (int k = 0; k < c.ngram_size - 1; ++k) r.context.push_back(fresh ? c.eos_token_id : random_token(rng, c));
    const int length = rng() % 5 == 0 ? 0 : std::uniform_int_distribution<int>(1, max_tokens)(rng);
    for (int i = 0; i < length; ++i) r.tokens.push_back(random_token(rng, c));
  }
  return requests;
}

inline TokenBatch to_batch(const ModelConfig& c, const std::vector<reference::Request>& requests) {
  TokenBatch batch(c.ngram_size);
  for (const auto& r : requests) batch.add_request(r.tokens, r.context);
  return batch;
}

inline std::vector<std::int64_t> flatten(const std::vector<std::vector<std::int64_t>>& rows) {
  std::vector<std::int64_t> flat;
  for (const auto& row : rows) flat.insert(flat.end(), row.begin(), row.end());
  return flat;
}

}  // namespace pleshard::testing_support
