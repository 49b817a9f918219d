#pragma once
// NumPy's default generator, bit for bit: np.random.default_rng(seed) is a SeedSequence
// feeding a PCG64, and Generator.integers(low, high, dtype=np.int64) draws from it with
// Lemire's bounded method. Engram multipliers (docs/design.md §10) are defined as such draws,
// so a checkpoint's ids depend on every bit of this port.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pleshard {

// numpy.random.SeedSequence(entropy) without spawn keys: the entropy's 32-bit words hashed
// into a pool of four words, from which any number of state words can be generated.
class SeedSequence {
 public:
  static constexpr std::size_t k_pool_words = 4;

  explicit SeedSequence(std::uint64_t entropy);

  // generate_state(n_words, np.uint64): 2 * n_words 32-bit words, paired little-endian.
  [[nodiscard]] std::vector<std::uint64_t> generate_state(std::size_t n_words) const;

 private:
  std::array<std::uint32_t, k_pool_words> pool_{};
};

// NumPy's PCG64 (PCG XSL-RR 128/64), seeded as BitGenerator(SeedSequence) seeds it.
class Pcg64 {
 public:
  __extension__ using uint128_t = unsigned __int128;

  explicit Pcg64(const SeedSequence& seeds);

  // One 64-bit output (NumPy's next_uint64).
  std::uint64_t next_u64();
  // NumPy's next_uint32: the low half of a 64-bit output, then its high half on the next call.
  // The kept half survives 64-bit draws in between, as it does in NumPy.
  std::uint32_t next_u32();

 private:
  void step();

  uint128_t state_ = 0;
  uint128_t increment_ = 0;
  bool has_u32_ = false;
  std::uint32_t kept_u32_ = 0;
};

// Generator.integers(low, high, size=count, dtype=np.int64) for low < high (high exclusive).
// Throws InputError when low >= high.
[[nodiscard]] std::vector<std::int64_t> numpy_integers(Pcg64& generator, std::int64_t low, std::int64_t high,
                                                       std::size_t count);

}  // namespace pleshard
