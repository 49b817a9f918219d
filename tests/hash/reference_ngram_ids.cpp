#include "hash/reference_ngram_ids.hpp"

namespace pleshard::reference {

namespace {

__extension__ using int128 = __int128;
__extension__ using uint128 = unsigned __int128;

std::uint64_t mix64(std::uint64_t v) {
  v = v + 0x9E3779B97F4A7C15ull;
  v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9ull;
  v = (v ^ (v >> 27)) * 0x94D049BB133111EBull;
  return v ^ (v >> 31);
}

std::int64_t python_mod(std::int64_t a, std::int64_t m) {
  const int128 r = static_cast<int128>(a) % m;
  return static_cast<std::int64_t>(r < 0 ? r + m : r);
}

}  // namespace

bool is_prime_by_trial_division(std::uint64_t n) {
  if (n < 2) return false;
  for (std::uint64_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}

std::int64_t multiplier(std::int64_t seed, std::int64_t ple_index, int i, std::int64_t vocab_size) {
  const int128 max_multiplier = ((static_cast<int128>(1) << 63) - 1) / vocab_size;
  const int128 half = max_multiplier / 2 > 1 ? max_multiplier / 2 : 1;
  // (seed + 10007*d + gamma*(i+1)) taken modulo 2^64, as the spec's 64-bit arithmetic does.
  const uint128 value = static_cast<uint128>(static_cast<int128>(seed) + 10007 * static_cast<int128>(ple_index)) +
                        static_cast<uint128>(0x9E3779B97F4A7C15ull) * static_cast<uint128>(i + 1);
  const std::uint64_t mixed = mix64(static_cast<std::uint64_t>(value));
  return static_cast<std::int64_t>(2 * (mixed % static_cast<std::uint64_t>(half)) + 1);
}

Layout layer_layout(const ModelConfig& c, int ple_index) {
  Layout layout;
  for (int i = 0; i < c.ngram_size; ++i) layout.multipliers.push_back(multiplier(c.seed, ple_index, i, c.vocab_size));
  const int heads = (c.ngram_size - 1) * c.heads_per_ngram;
  // Head g = d*H + h has the (g+1)-th prime >= base: count primes from the base.
  std::vector<std::int64_t> primes;
  for (std::uint64_t candidate = static_cast<std::uint64_t>(c.ngram_vocab_size_base);
       primes.size() < static_cast<std::size_t>((ple_index + 1) * heads); ++candidate) {
    if (is_prime_by_trial_division(candidate)) primes.push_back(static_cast<std::int64_t>(candidate));
  }
  std::int64_t offset = 0;
  for (int h = 0; h < heads; ++h) {
    const std::int64_t size = primes[static_cast<std::size_t>(ple_index * heads + h)];
    layout.head_sizes.push_back(size);
    layout.head_offsets.push_back(offset);
    offset += size;
  }
  layout.padded_rows = (offset + c.vocab_size_divisor - 1) / c.vocab_size_divisor * c.vocab_size_divisor;
  return layout;
}

std::vector<std::vector<std::int64_t>> ngram_ids(const Layout& layout, int ngram_size, int heads_per_ngram,
                                                 std::int64_t eos, const std::vector<Request>& requests) {
  std::vector<std::vector<std::int64_t>> rows;
  for (const Request& request : requests) {
    std::vector<std::int64_t> sequence = request.context;
    sequence.insert(sequence.end(), request.tokens.begin(), request.tokens.end());
    for (std::size_t p = request.context.size(); p < sequence.size(); ++p) {
      // t[k] is the token k places back, with EOS spreading to everything older.
      std::vector<std::int64_t> t(static_cast<std::size_t>(ngram_size));
      bool seen_eos = false;
      for (int k = 0; k < ngram_size; ++k) {
        std::int64_t token = sequence[p - static_cast<std::size_t>(k)];
        if (k > 0 && seen_eos) token = eos;
        if (k > 0 && token == eos) seen_eos = true;
        t[static_cast<std::size_t>(k)] = token;
      }
      std::vector<std::int64_t> row;
      for (int n = 2; n <= ngram_size; ++n) {
        std::uint64_t mix = 0;
        for (int k = 0; k < n; ++k)
          mix ^= static_cast<std::uint64_t>(t[static_cast<std::size_t>(k)]) *
                 static_cast<std::uint64_t>(layout.multipliers[static_cast<std::size_t>(k)]);
        for (int h = 0; h < heads_per_ngram; ++h) {
          const auto head = static_cast<std::size_t>((n - 2) * heads_per_ngram + h);
          row.push_back(python_mod(static_cast<std::int64_t>(mix), layout.head_sizes[head]) +
                        layout.head_offsets[head]);
        }
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace pleshard::reference
