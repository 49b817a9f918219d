#include "model/engram_heads.hpp"

#include <limits>
#include <map>
#include <set>
#include <string>

#include "core/error.hpp"
#include "kernels/common/ngram_hash.hpp"

namespace pleshard {

namespace {

constexpr std::int64_t k_max_vocab_size = std::int64_t{1} << 62;

void check_shape(const EngramHeadShape& shape) {
  if (shape.num_layers < 1)
    throw InputError("engram_layer_ids: " + std::to_string(shape.num_layers) + " layers, need at least 1");
  if (shape.max_ngram < 2)
    throw InputError("engram_max_ngram_size = " + std::to_string(shape.max_ngram) + " must be at least 2");
  if (shape.heads_per_ngram < 1)
    throw InputError("engram_n_heads = " + std::to_string(shape.heads_per_ngram) + " must be at least 1");
  const auto orders = static_cast<std::size_t>(shape.max_ngram - 1);
  if (shape.vocab_sizes.size() != 1 && shape.vocab_sizes.size() != orders)
    throw InputError("engram_vocab_size has " + std::to_string(shape.vocab_sizes.size()) + " sizes, expected 1 or " +
                     std::to_string(orders) + " (orders 2.." + std::to_string(shape.max_ngram) + ")");
  for (std::int64_t size : shape.vocab_sizes) {
    if (size < 1 || size > k_max_vocab_size)
      throw InputError("engram_vocab_size " + std::to_string(size) + " is outside [1, 2^62]");
  }
}

// Hands out primes, each once. A search for the smallest free prime >= v resumes after the
// last one it found for the same v: primes are only ever taken, so the answer never falls,
// and a walk of many heads over one vocab size stays linear.
class PrimeWalk {
 public:
  std::int64_t take(std::int64_t at_least) {
    const auto resumed = last_found_.find(at_least);
    std::uint64_t prime = resumed == last_found_.end()
                              ? kernels::next_prime_above(static_cast<std::uint64_t>(at_least) - 1)
                              : kernels::next_prime_above(resumed->second);
    while (taken_.contains(prime)) prime = kernels::next_prime_above(prime);
    taken_.insert(prime);
    last_found_[at_least] = prime;
    return static_cast<std::int64_t>(prime);
  }

 private:
  std::set<std::uint64_t> taken_;
  std::map<std::int64_t, std::uint64_t> last_found_;
};

}  // namespace

std::vector<EngramHeads> engram_heads(const EngramHeadShape& shape) {
  check_shape(shape);
  PrimeWalk primes;  // one for the whole model
  std::vector<EngramHeads> layers(static_cast<std::size_t>(shape.num_layers));
  for (EngramHeads& heads : layers) {
    for (int n = 2; n <= shape.max_ngram; ++n) {
      const std::int64_t vocab = shape.vocab_sizes.size() == 1 ? shape.vocab_sizes[0] : shape.vocab_sizes[n - 2];
      for (int k = 0; k < shape.heads_per_ngram; ++k) {
        const std::int64_t size = primes.take(vocab);
        if (heads.rows > std::numeric_limits<std::int64_t>::max() - size)
          throw InputError("engram_vocab_size " + std::to_string(vocab) + " makes a table of more than 2^63 rows");
        heads.sizes.push_back(size);
        heads.offsets.push_back(heads.rows);
        heads.rows += size;
      }
    }
  }
  return layers;
}

}  // namespace pleshard
