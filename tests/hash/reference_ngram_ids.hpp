#pragma once
// A deliberately simple scalar reference of docs/design.md §2, written from the text of the
// spec and sharing no code with the library: trial-division primes, one request at a
// time, predecessors walked one by one.

#include <cstdint>
#include <vector>

#include "model/model_config.hpp"

namespace pleshard::reference {

bool is_prime_by_trial_division(std::uint64_t n);

std::int64_t multiplier(std::int64_t seed, std::int64_t ple_index, int i, std::int64_t vocab_size);

struct Layout {
  std::vector<std::int64_t> multipliers;
  std::vector<std::int64_t> head_sizes;
  std::vector<std::int64_t> head_offsets;
  std::int64_t padded_rows = 0;
};

Layout layer_layout(const ModelConfig& config, int ple_index);

struct Request {
  std::vector<std::int64_t> context;  // N-1 tokens, oldest first
  std::vector<std::int64_t> tokens;
};

// One row of H ids per token, requests in order.
std::vector<std::vector<std::int64_t>> ngram_ids(const Layout& layout, int ngram_size, int heads_per_ngram,
                                                 std::int64_t eos, const std::vector<Request>& requests);

}  // namespace pleshard::reference
