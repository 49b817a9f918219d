#pragma once
// Host entry point for n-gram ids: one layer, one batch, on the host kernel.

#include <cstdint>
#include <vector>

#include "hash/token_batch.hpp"
#include "model/table_spec.hpp"

namespace pleshard {

// num_tokens rows of H ids each (row-major), order-2 heads first.
[[nodiscard]] std::vector<std::int64_t> compute_ngram_ids(const TableSpec& spec, const TokenBatch& batch);

}  // namespace pleshard
