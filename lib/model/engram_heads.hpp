#pragma once
// Prime head sizes of Engram tables (docs/design.md §10): every head of every layer takes its own
// prime, so no two heads of the model share a modulus.

#include <cstdint>
#include <vector>

namespace pleshard {

struct EngramHeadShape {
  int num_layers = 0;       // tables, walked in config order
  int max_ngram = 0;        // N: orders 2..N
  int heads_per_ngram = 0;  // K
  // One size for every order, or N - 1 sizes for orders 2..N.
  std::vector<std::int64_t> vocab_sizes;
};

// One layer's heads; column c = (n - 2) * K + k holds head k of order n.
struct EngramHeads {
  std::vector<std::int64_t> sizes;    // H = (N - 1) * K primes
  std::vector<std::int64_t> offsets;  // running sums of sizes, from 0
  std::int64_t rows = 0;              // sum of sizes
};

// For each layer, order and head in turn: the smallest prime >= the order's vocab size that
// no earlier head of any layer has taken. Throws InputError for a shape without heads, a
// vocab list of the wrong length, sizes outside [1, 2^62] or rows past 2^63.
[[nodiscard]] std::vector<EngramHeads> engram_heads(const EngramHeadShape& shape);

}  // namespace pleshard
