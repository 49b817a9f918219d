// Engram's multipliers (fixed values of the released model) and prime head walk (against a
// plain trial-division walk over a set of taken primes).

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "model/engram_heads.hpp"
#include "model/engram_multipliers.hpp"

namespace {

using pleshard::engram_heads;
using pleshard::engram_multipliers;
using pleshard::EngramHeads;
using pleshard::EngramHeadShape;
using pleshard::InputError;

TEST(EngramMultipliers, DeepSeekV41FlashValues) {
  constexpr std::int64_t compressed_vocab = 99092;
  EXPECT_EQ(engram_multipliers(1, compressed_vocab, 4),
            (std::vector<std::int64_t>{76632096046245, 4839876093313, 35959672319349, 73987337458391}));
  EXPECT_EQ(engram_multipliers(14, compressed_vocab, 4),
            (std::vector<std::int64_t>{67716810739261, 51510806800915, 30921347202721, 82619226485591}));
}

TEST(EngramMultipliers, OddAndSmallEnoughNotToOverflow) {
  for (std::int64_t compressed_vocab : {std::int64_t{1}, std::int64_t{2}, std::int64_t{1000}, std::int64_t{129280},
                                        std::int64_t{1} << 40, std::int64_t{1} << 62}) {
    for (int layer = 0; layer < 8; ++layer) {
      for (std::int64_t m : engram_multipliers(layer, compressed_vocab, 5)) {
        EXPECT_EQ(m % 2, 1) << m;
        EXPECT_GE(m, 1);
        EXPECT_LE(m, INT64_MAX / compressed_vocab) << "C " << compressed_vocab;
      }
    }
  }
}

TEST(EngramMultipliers, RefusesBadInputs) {
  EXPECT_THROW((void)engram_multipliers(-1, 99092, 4), InputError);
  EXPECT_THROW((void)engram_multipliers(1, 0, 4), InputError);
  EXPECT_THROW((void)engram_multipliers(1, 99092, 0), InputError);
}

bool is_prime_by_trial_division(std::int64_t n) {
  if (n < 2) return false;
  for (std::int64_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}

// Head sizes of every layer, walked one integer at a time.
std::vector<std::vector<std::int64_t>> reference_head_sizes(const EngramHeadShape& shape) {
  std::set<std::int64_t> taken;
  std::vector<std::vector<std::int64_t>> layers(static_cast<std::size_t>(shape.num_layers));
  for (auto& sizes : layers) {
    for (int n = 2; n <= shape.max_ngram; ++n) {
      const std::int64_t vocab = shape.vocab_sizes.size() == 1 ? shape.vocab_sizes[0] : shape.vocab_sizes[n - 2];
      for (int k = 0; k < shape.heads_per_ngram; ++k) {
        std::int64_t candidate = vocab;
        while (!is_prime_by_trial_division(candidate) || taken.contains(candidate)) ++candidate;
        taken.insert(candidate);
        sizes.push_back(candidate);
      }
    }
  }
  return layers;
}

void expect_consistent(const EngramHeads& heads) {
  ASSERT_EQ(heads.offsets.size(), heads.sizes.size());
  std::int64_t sum = 0;
  for (std::size_t h = 0; h < heads.sizes.size(); ++h) {
    EXPECT_EQ(heads.offsets[h], sum) << "head " << h;
    sum += heads.sizes[h];
  }
  EXPECT_EQ(heads.rows, sum);
}

TEST(EngramHeads, MatchReferenceOnRandomShapes) {
  std::mt19937_64 random(7);
  auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(random);
  };
  for (int trial = 0; trial < 300; ++trial) {
    EngramHeadShape shape;
    shape.num_layers = static_cast<int>(uniform(1, 3));
    shape.max_ngram = static_cast<int>(uniform(2, 5));
    shape.heads_per_ngram = static_cast<int>(uniform(1, 8));
    // Small sizes, often equal or close across orders, so later walks skip taken primes.
    const std::int64_t base = uniform(0, 3) == 0 ? uniform(1, 5) : uniform(1, 3000);
    const std::size_t sizes = uniform(0, 1) == 0 ? 1 : static_cast<std::size_t>(shape.max_ngram - 1);
    for (std::size_t i = 0; i < sizes; ++i) shape.vocab_sizes.push_back(base + uniform(0, 1) * uniform(0, 40));

    const std::vector<EngramHeads> layers = engram_heads(shape);
    const std::vector<std::vector<std::int64_t>> expected = reference_head_sizes(shape);
    ASSERT_EQ(layers.size(), expected.size());
    for (std::size_t d = 0; d < layers.size(); ++d) {
      EXPECT_EQ(layers[d].sizes, expected[d]) << "trial " << trial << " layer " << d;
      expect_consistent(layers[d]);
    }
  }
}

TEST(EngramHeads, DeepSeekV41FlashRows) {
  // Layers [1, 14], N 4, K 8, vocab 16,000,000, given as one size and as one per order.
  for (const std::vector<std::int64_t>& vocab :
       {std::vector<std::int64_t>{16'000'000}, std::vector<std::int64_t>(3, 16'000'000)}) {
    const std::vector<EngramHeads> layers = engram_heads({2, 4, 8, vocab});
    ASSERT_EQ(layers.size(), 2u);
    EXPECT_EQ(layers[0].rows, 384'006'168);
    EXPECT_EQ(layers[1].rows, 384'016'682);
    for (const EngramHeads& heads : layers) {
      EXPECT_EQ(heads.sizes.size(), 24u);
      expect_consistent(heads);
    }
    EXPECT_EQ(layers[0].sizes.front(), 16'000'057);  // the first prime >= 16,000,000
  }
}

TEST(EngramHeads, RefusesBadShapes) {
  EXPECT_THROW((void)engram_heads({0, 4, 8, {100}}), InputError);
  EXPECT_THROW((void)engram_heads({1, 1, 8, {100}}), InputError);
  EXPECT_THROW((void)engram_heads({1, 4, 0, {100}}), InputError);
  EXPECT_THROW((void)engram_heads({1, 4, 8, {100, 200}}), InputError);
  EXPECT_THROW((void)engram_heads({1, 4, 8, {}}), InputError);
  EXPECT_THROW((void)engram_heads({1, 4, 8, {0}}), InputError);
  EXPECT_THROW((void)engram_heads({1, 4, 8, {(std::int64_t{1} << 62) + 1}}), InputError);
}

}  // namespace
