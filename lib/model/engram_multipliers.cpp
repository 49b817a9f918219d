#include "model/engram_multipliers.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "model/numpy_random.hpp"

namespace pleshard {

namespace {

constexpr std::int64_t k_layer_seed_prime = 10007;

}  // namespace

std::vector<std::int64_t> engram_multipliers(int layer_id, std::int64_t compressed_vocab, int max_ngram) {
  if (layer_id < 0)
    throw InputError("engram layer id " + std::to_string(layer_id) + " is negative; multipliers need a seed >= 0");
  if (compressed_vocab < 1)
    throw InputError("engram_compressed_vocab_size = " + std::to_string(compressed_vocab) + " must be at least 1");
  if (max_ngram < 1) throw InputError("engram_max_ngram_size = " + std::to_string(max_ngram) + " must be at least 1");
  const std::int64_t bound = std::max<std::int64_t>(1, std::numeric_limits<std::int64_t>::max() / compressed_vocab / 2);
  Pcg64 generator(SeedSequence(static_cast<std::uint64_t>(k_layer_seed_prime * layer_id)));
  std::vector<std::int64_t> multipliers = numpy_integers(generator, 0, bound, static_cast<std::size_t>(max_ngram));
  for (std::int64_t& m : multipliers) m = m * 2 + 1;
  return multipliers;
}

}  // namespace pleshard
