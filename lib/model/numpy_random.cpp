#include "model/numpy_random.hpp"

#include <string>

#include "core/error.hpp"

namespace pleshard {

namespace {

// SeedSequence's hashing constants (numpy/random/bit_generator.pyx).
constexpr std::uint32_t k_init_a = 0x43b0d7e5;
constexpr std::uint32_t k_mult_a = 0x931e8875;
constexpr std::uint32_t k_init_b = 0x8b51f9dd;
constexpr std::uint32_t k_mult_b = 0x58f38ded;
constexpr std::uint32_t k_mix_mult_l = 0xca01f9dd;
constexpr std::uint32_t k_mix_mult_r = 0x4973f715;
constexpr int k_xshift = 16;

// Hashes one word with a running constant that every call advances.
std::uint32_t hashmix(std::uint32_t value, std::uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= k_mult_a;
  value *= hash_const;
  return value ^ (value >> k_xshift);
}

std::uint32_t mix(std::uint32_t x, std::uint32_t y) {
  const std::uint32_t result = k_mix_mult_l * x - k_mix_mult_r * y;
  return result ^ (result >> k_xshift);
}

// The 32-bit words of a non-negative integer, least significant first; 0 is one word.
std::vector<std::uint32_t> entropy_words(std::uint64_t entropy) {
  std::vector<std::uint32_t> words;
  do {
    words.push_back(static_cast<std::uint32_t>(entropy));
    entropy >>= 32;
  } while (entropy != 0);
  return words;
}

constexpr Pcg64::uint128_t k_pcg_multiplier =
    (Pcg64::uint128_t{0x2360ED051FC65DA4ull} << 64) | Pcg64::uint128_t{0x4385DF649FCCF645ull};

std::uint64_t rotate_right(std::uint64_t value, unsigned rotation) {
  return (value >> rotation) | (value << ((64 - rotation) & 63));
}

// Lemire's bounded draw in [0, rng] for 0 < rng < 2^32 - 1 (NumPy's
// buffered_bounded_lemire_uint32; the "buffer" is the generator's kept half).
std::uint32_t bounded_lemire_u32(Pcg64& generator, std::uint32_t rng) {
  const std::uint32_t rng_excl = rng + 1;
  std::uint64_t m = std::uint64_t{generator.next_u32()} * rng_excl;
  auto leftover = static_cast<std::uint32_t>(m);
  if (leftover < rng_excl) {
    const std::uint32_t threshold = (0xFFFFFFFFu - rng) % rng_excl;
    while (leftover < threshold) {
      m = std::uint64_t{generator.next_u32()} * rng_excl;
      leftover = static_cast<std::uint32_t>(m);
    }
  }
  return static_cast<std::uint32_t>(m >> 32);
}

// Lemire's bounded draw in [0, rng] for 2^32 <= rng < 2^64 - 1 (NumPy's bounded_lemire_uint64).
std::uint64_t bounded_lemire_u64(Pcg64& generator, std::uint64_t rng) {
  const std::uint64_t rng_excl = rng + 1;
  Pcg64::uint128_t m = Pcg64::uint128_t{generator.next_u64()} * rng_excl;
  auto leftover = static_cast<std::uint64_t>(m);
  if (leftover < rng_excl) {
    const std::uint64_t threshold = (~std::uint64_t{0} - rng) % rng_excl;
    while (leftover < threshold) {
      m = Pcg64::uint128_t{generator.next_u64()} * rng_excl;
      leftover = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

// One draw in [0, rng] as NumPy's random_bounded_uint64_fill makes it: ranges that fit 32
// bits take 32-bit words, wider ones 64-bit words. rng < 2^64 - 1: an exclusive int64 high
// always leaves one value out.
std::uint64_t bounded_draw(Pcg64& generator, std::uint64_t rng) {
  if (rng == 0) return 0;  // draws nothing from the generator
  if (rng < 0xFFFFFFFFull) return bounded_lemire_u32(generator, static_cast<std::uint32_t>(rng));
  if (rng == 0xFFFFFFFFull) return generator.next_u32();  // every 32-bit word is in range
  return bounded_lemire_u64(generator, rng);
}

}  // namespace

SeedSequence::SeedSequence(std::uint64_t entropy) {
  const std::vector<std::uint32_t> words = entropy_words(entropy);
  std::uint32_t hash_const = k_init_a;
  for (std::size_t i = 0; i < k_pool_words; ++i) pool_[i] = hashmix(i < words.size() ? words[i] : 0, hash_const);
  for (std::size_t src = 0; src < k_pool_words; ++src) {
    for (std::size_t dst = 0; dst < k_pool_words; ++dst) {
      if (src != dst) pool_[dst] = mix(pool_[dst], hashmix(pool_[src], hash_const));
    }
  }
  // A 64-bit entropy has at most two words: none is left over to mix in after the pool.
}

std::vector<std::uint64_t> SeedSequence::generate_state(std::size_t n_words) const {
  std::vector<std::uint64_t> state(n_words, 0);
  std::uint32_t hash_const = k_init_b;
  for (std::size_t i = 0; i < 2 * n_words; ++i) {
    std::uint32_t value = pool_[i % k_pool_words];
    value ^= hash_const;
    hash_const *= k_mult_b;
    value *= hash_const;
    value ^= value >> k_xshift;
    state[i / 2] |= std::uint64_t{value} << (32 * (i % 2));
  }
  return state;
}

Pcg64::Pcg64(const SeedSequence& seeds) {
  // pcg64_set_seed: 128-bit initial state and stream from the four 64-bit words, high word first.
  const std::vector<std::uint64_t> words = seeds.generate_state(4);
  const uint128_t initial_state = (uint128_t{words[0]} << 64) | words[1];
  const uint128_t stream = (uint128_t{words[2]} << 64) | words[3];
  increment_ = (stream << 1) | 1;
  state_ = 0;
  step();
  state_ += initial_state;
  step();
}

void Pcg64::step() { state_ = state_ * k_pcg_multiplier + increment_; }

std::uint64_t Pcg64::next_u64() {
  step();
  const auto folded = static_cast<std::uint64_t>(state_ >> 64) ^ static_cast<std::uint64_t>(state_);
  return rotate_right(folded, static_cast<unsigned>(state_ >> 122));
}

std::uint32_t Pcg64::next_u32() {
  if (has_u32_) {
    has_u32_ = false;
    return kept_u32_;
  }
  const std::uint64_t value = next_u64();
  has_u32_ = true;
  kept_u32_ = static_cast<std::uint32_t>(value >> 32);
  return static_cast<std::uint32_t>(value);
}

std::vector<std::int64_t> numpy_integers(Pcg64& generator, std::int64_t low, std::int64_t high, std::size_t count) {
  if (low >= high)
    throw InputError("random integers: low " + std::to_string(low) + " must be below high " + std::to_string(high));
  // Draws lie in the closed range [low, low + rng]; the sums wrap as NumPy's uint64 sums do.
  const auto offset = static_cast<std::uint64_t>(low);
  const std::uint64_t rng = static_cast<std::uint64_t>(high) - offset - 1;
  std::vector<std::int64_t> draws(count);
  for (std::int64_t& draw : draws) draw = static_cast<std::int64_t>(offset + bounded_draw(generator, rng));
  return draws;
}

}  // namespace pleshard
