#pragma once
// The hash multipliers of an Engram layer (docs/design.md §10), drawn as the released model drew
// them: NumPy's default_rng(10007 * layer_id).integers(0, bound, size=N) * 2 + 1.

#include <cstdint>
#include <vector>

namespace pleshard {

// N odd multipliers of decoder layer `layer_id` (not its table index), each at most
// (2^63 - 1) / compressed_vocab so that a compressed id times it cannot overflow.
// Throws InputError for a negative layer id, compressed_vocab < 1 or max_ngram < 1.
[[nodiscard]] std::vector<std::int64_t> engram_multipliers(int layer_id, std::int64_t compressed_vocab, int max_ngram);

}  // namespace pleshard
