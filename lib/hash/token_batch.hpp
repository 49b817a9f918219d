#pragma once
// A step's tokens laid out like vLLM (docs/design.md §2): flat tokens, request boundaries and
// one context row of N-1 tokens per request (oldest first).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/common/ngram_hash.hpp"

namespace pleshard {

struct TokenBatch {
  int context_width = 0;                         // N - 1
  std::vector<std::int64_t> tokens;              // all requests' step tokens, concatenated
  std::vector<std::int64_t> query_start_loc{0};  // num_requests + 1 boundaries
  std::vector<std::int64_t> context;             // num_requests * context_width

  explicit TokenBatch(int ngram_size = 2) : context_width(ngram_size - 1) {}

  [[nodiscard]] std::int64_t num_requests() const { return static_cast<std::int64_t>(query_start_loc.size()) - 1; }
  [[nodiscard]] std::int64_t num_tokens() const { return static_cast<std::int64_t>(tokens.size()); }

  // Appends a request; `request_context` must hold context_width tokens.
  void add_request(std::span<const std::int64_t> step_tokens, std::span<const std::int64_t> request_context);

  [[nodiscard]] kernels::NgramBatchView view() const;
  [[nodiscard]] bool operator==(const TokenBatch&) const = default;
};

// The context of a request that has seen no token yet: N-1 positions before it
// (kernels::k_before_request), which each family's hashing fills its own way.
[[nodiscard]] std::vector<std::int64_t> fresh_context(int ngram_size);

// A context of the tokens just before a chunk, oldest first: the last N-1 of them, or all
// of them after as many positions before the request as they are short of N-1.
[[nodiscard]] std::vector<std::int64_t> context_before(int ngram_size, std::span<const std::int64_t> tokens);

// Moves a request's context past one step: it becomes the last N-1 tokens of
// (context, step_tokens), so the next step hashes exactly as if processed whole.
void advance_context(std::span<std::int64_t> context, std::span<const std::int64_t> step_tokens);

// Packs `batch` as one slot of a SlotBatchView of `slot_tokens` tokens (at least its own)
// into `block` (SlotBatchView::block_size entries): its tokens and non-empty requests, then
// a padding request holding the remaining zero tokens, then empty requests, with zero
// contexts for both. Returns the block's runs of data and padding
// (SlotBatchView::layout), which a copy of it need not read past.
kernels::PaddedBlock pack_slot(const TokenBatch& batch, std::int64_t slot_tokens, std::span<std::int64_t> block);

// Throws InputError naming `source` if the layout is inconsistent.
void validate_batch(const TokenBatch& batch, const std::string& source);

}  // namespace pleshard
