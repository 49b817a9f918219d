// splitmix64, Miller–Rabin, multipliers and the prime layout against independent checks.

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <random>
#include <vector>

#include "hash/reference_ngram_ids.hpp"
#include "kernels/common/ngram_hash.hpp"
#include "model/model_config.hpp"
#include "model/qwen4exp.hpp"
#include "model/table_spec.hpp"

namespace {

using pleshard::kernels::is_prime_u64;
using pleshard::kernels::next_prime_above;
using pleshard::kernels::splitmix64;

// The SplitMix64 generator's published outputs: state starts at the seed, each output is
// splitmix64(state) and the state advances by the golden gamma.
TEST(Splitmix64, MatchesPublishedSequences) {
  constexpr std::uint64_t gamma = 0x9E3779B97F4A7C15ull;
  const std::uint64_t seed0[] = {0xE220A8397B1DCDAFull, 0x6E789E6AA1B965F4ull, 0x06C45D188009454Full};
  std::uint64_t state = 0;
  for (std::uint64_t expected : seed0) {
    EXPECT_EQ(splitmix64(state), expected);
    state += gamma;
  }
  const std::uint64_t seed1234567[] = {6457827717110365317ull, 3203168211198807973ull, 9817491932198370423ull,
                                       4593380528125082431ull, 16408922859458223821ull};
  state = 1234567;
  for (std::uint64_t expected : seed1234567) {
    EXPECT_EQ(splitmix64(state), expected);
    state += gamma;
  }
}

TEST(MillerRabin, AgreesWithASieveBelowOneMillion) {
  constexpr std::size_t limit = 1'000'000;
  std::vector<bool> composite(limit, false);
  composite[0] = composite[1] = true;
  for (std::size_t p = 2; p * p < limit; ++p)
    if (!composite[p])
      for (std::size_t m = p * p; m < limit; m += p) composite[m] = true;
  std::size_t disagreements = 0;
  for (std::size_t n = 0; n < limit; ++n)
    if (is_prime_u64(n) == composite[n]) ++disagreements;
  EXPECT_EQ(disagreements, 0u);
}

TEST(MillerRabin, KnownLargePrimes) {
  const std::uint64_t primes[] = {
      2147483647ull,                          // 2^31 - 1
      1000000007ull,           998244353ull,  //
      4294967291ull,                          // largest prime below 2^32
      2305843009213693951ull,                 // 2^61 - 1
      9223372036854775783ull,                 // largest prime below 2^63
      18446744073709551557ull,                // largest prime below 2^64
  };
  for (std::uint64_t p : primes) EXPECT_TRUE(is_prime_u64(p)) << p;
}

// Composites given with a factorization, so the test itself proves they are composite.
TEST(MillerRabin, StrongPseudoprimesAndCarmichaelNumbersAreComposite) {
  struct Composite {
    std::uint64_t n;
    std::vector<std::uint64_t> factors;
  };
  const std::vector<Composite> composites = {
      {2047, {23, 89}},                                      // strong pseudoprime to base 2
      {1373653, {829, 1657}},                                // bases 2, 3
      {25326001, {2251, 11251}},                             // bases 2, 3, 5
      {3215031751ull, {151, 751, 28351}},                    // bases 2, 3, 5, 7
      {2152302898747ull, {6763, 10627, 29947}},              // bases 2..11
      {3474749660383ull, {1303, 16927, 157543}},             // bases 2..13
      {341550071728321ull, {10670053, 32010157}},            // bases 2..17
      {3825123056546413051ull, {149491, 747451, 34233211}},  // bases 2..23
      {561, {3, 11, 17}},                                    // Carmichael numbers
      {41041, {7, 11, 13, 41}},
      {825265, {5, 7, 17, 19, 73}},
      {321197185, {5, 19, 23, 29, 37, 137}},
      {4294967291ull * 4294967279ull, {4294967291ull, 4294967279ull}},
      {4294967291ull * 4294967291ull, {4294967291ull, 4294967291ull}},
  };
  for (const auto& c : composites) {
    pleshard::kernels::uint128_t product = 1;
    for (std::uint64_t f : c.factors) product *= f;
    ASSERT_EQ(static_cast<std::uint64_t>(product), c.n) << "bad factorization in the test";
    EXPECT_FALSE(is_prime_u64(c.n)) << c.n;
  }
}

TEST(MillerRabin, NextPrimeAboveWalksThePrimes) {
  EXPECT_EQ(next_prime_above(0), 2u);
  EXPECT_EQ(next_prime_above(1), 2u);
  EXPECT_EQ(next_prime_above(2), 3u);
  EXPECT_EQ(next_prime_above(3), 5u);
  EXPECT_EQ(next_prime_above(4294967279ull), 4294967291ull);
  for (std::uint64_t n = 0; n < 20000; n += 7) {
    const std::uint64_t p = next_prime_above(n);
    EXPECT_TRUE(pleshard::reference::is_prime_by_trial_division(p));
    for (std::uint64_t m = n + 1; m < p; ++m) EXPECT_FALSE(pleshard::reference::is_prime_by_trial_division(m));
  }
}

pleshard::ModelConfig layout_config(std::int64_t base, int n, int k, std::int64_t divisor) {
  pleshard::ModelConfig c;
  c.source = "test";
  c.vocab_size = 151'936;
  c.eos_token_id = 151'643;
  c.num_hidden_layers = 8;
  c.ngram_size = n;
  c.heads_per_ngram = k;
  c.ple_embed_dim = 160 * (n - 1) * k;
  c.ngram_vocab_size_base = base;
  c.vocab_size_divisor = divisor;
  c.split_ngram_parts = 512;
  c.ple_layer_ids = {1, 3, 5, 8};
  return c;
}

TEST(PrimeLayout, SeveralLayersMatchTheReference) {
  for (const auto& config :
       {layout_config(20'000'000, 3, 8, 128), layout_config(2, 4, 3, 64), layout_config(1'000'000'000, 2, 5, 1)}) {
    const auto specs = pleshard::derive_table_specs(config);
    ASSERT_EQ(specs.size(), 4u);
    for (const auto& spec : specs) {
      const auto expected = pleshard::reference::layer_layout(config, spec.ple_index);
      EXPECT_EQ(spec.multipliers, expected.multipliers);
      EXPECT_EQ(spec.head_sizes, expected.head_sizes);
      EXPECT_EQ(spec.head_offsets, expected.head_offsets);
      EXPECT_EQ(spec.padded_rows, expected.padded_rows);
      EXPECT_EQ(spec.padded_rows % config.vocab_size_divisor, 0);
      EXPECT_GE(spec.padded_rows, spec.logical_rows);
      EXPECT_EQ(spec.shard_rows * config.split_ngram_parts >= spec.padded_rows, true);
      EXPECT_EQ(spec.decoder_layer, config.ple_layer_ids[static_cast<std::size_t>(spec.ple_index)]);
    }
  }
}

TEST(Multipliers, AreOddAndBoundedByTheVocabulary) {
  for (std::int64_t vocab : {1LL, 2LL, 151936LL, 200019LL, 1LL << 40, 0x7FFFFFFFFFFFFFFFLL}) {
    const std::uint64_t bound = 0x7FFFFFFFFFFFFFFFull / static_cast<std::uint64_t>(vocab);
    for (int d = 0; d < 5; ++d) {
      for (int i = 0; i < 6; ++i) {
        const std::int64_t m = pleshard::qwen4exp_multiplier(1234, d, i, vocab);
        EXPECT_EQ(m % 2, 1);
        EXPECT_LE(static_cast<std::uint64_t>(m), std::max<std::uint64_t>(bound, 1));
        EXPECT_EQ(m, pleshard::reference::multiplier(1234, d, i, vocab));
      }
    }
  }
}

}  // namespace

namespace {

TEST(FloorMod, MatchesWideDivisionOnEdgesAndRandomValues) {
  using pleshard::kernels::floor_mod;
  using pleshard::kernels::modulus_reciprocal;
  __extension__ using int128 = __int128;
  auto expected = [](std::int64_t a, std::uint64_t d) {
    const int128 r = static_cast<int128>(a) % static_cast<int128>(d);
    return static_cast<std::int64_t>(r < 0 ? r + static_cast<int128>(d) : r);
  };
  std::vector<std::uint64_t> divisors = {
      1, 2, 3, 97, 20000003, 4294967291ull, 4294967311ull, 9223372036854775783ull, 1ull << 63};
  std::vector<std::int64_t> values = {0, 1, -1, 2, -2, INT64_MAX, INT64_MIN, INT64_MIN + 1, INT64_MAX - 1};
  std::mt19937_64 rng(11);
  for (int i = 0; i < 200; ++i) divisors.push_back(1 + (rng() >> (rng() % 64)) % (1ull << 63));
  for (int i = 0; i < 500; ++i) values.push_back(static_cast<std::int64_t>(rng()));
  for (std::uint64_t d : divisors) {
    const std::uint64_t reciprocal = modulus_reciprocal(d);
    for (std::int64_t a : values) {
      ASSERT_EQ(floor_mod(a, d, reciprocal), expected(a, d)) << a << " mod " << d;
    }
  }
}

}  // namespace

namespace {

// jobs/models/qwen3.8-flash-next/config.json gives docs/design.md §9's table: 320,001,536 rows
// of 160 values, and its multipliers of PLE index 0.
TEST(RealModels, QwenFlashNextConfigGivesTheDesignTable) {
  const auto config = pleshard::load_model_config(PLESHARD_SOURCE_DIR "/jobs/models/qwen3.8-flash-next/config.json");
  const auto spec = pleshard::derive_table_spec(config, 0);
  EXPECT_EQ(config.num_ple_layers(), 1);
  EXPECT_EQ(spec.total_heads(), 16);
  EXPECT_EQ(spec.head_dim, 160);
  EXPECT_EQ(spec.padded_rows, 320'001'536);
  EXPECT_EQ(spec.head_sizes.front(), 20'000'003);
  EXPECT_EQ(spec.shard_rows, 2'500'012);
  EXPECT_EQ(spec.multipliers, (std::vector<std::int64_t>{23703573157769, 20109073645365, 8052911324071}));
}

}  // namespace
