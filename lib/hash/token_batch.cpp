#include "hash/token_batch.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace pleshard {

void TokenBatch::add_request(std::span<const std::int64_t> step_tokens, std::span<const std::int64_t> request_context) {
  if (static_cast<int>(request_context.size()) != context_width)
    throw InputError("request " + std::to_string(num_requests()) + ": context has " +
                     std::to_string(request_context.size()) + " tokens, expected " + std::to_string(context_width));
  tokens.insert(tokens.end(), step_tokens.begin(), step_tokens.end());
  query_start_loc.push_back(static_cast<std::int64_t>(tokens.size()));
  context.insert(context.end(), request_context.begin(), request_context.end());
}

kernels::NgramBatchView TokenBatch::view() const {
  return {tokens.data(), num_tokens(), query_start_loc.data(), num_requests(), context.data()};
}

std::vector<std::int64_t> fresh_context(int ngram_size) {
  return std::vector<std::int64_t>(static_cast<std::size_t>(ngram_size - 1), kernels::k_before_request);
}

std::vector<std::int64_t> context_before(int ngram_size, std::span<const std::int64_t> tokens) {
  std::vector<std::int64_t> context = fresh_context(ngram_size);
  advance_context(context, tokens);
  return context;
}

void advance_context(std::span<std::int64_t> context, std::span<const std::int64_t> step_tokens) {
  const std::size_t width = context.size();
  const std::size_t take = std::min(width, step_tokens.size());
  // Keep the newest (width - take) context tokens, then append the last `take` step tokens.
  std::shift_left(context.begin(), context.end(), static_cast<std::ptrdiff_t>(take));
  std::copy(step_tokens.end() - static_cast<std::ptrdiff_t>(take), step_tokens.end(),
            context.end() - static_cast<std::ptrdiff_t>(take));
}

kernels::PaddedBlock pack_slot(const TokenBatch& batch, std::int64_t slot_tokens, std::span<std::int64_t> block) {
  const auto t = static_cast<std::size_t>(slot_tokens);
  const auto width = static_cast<std::size_t>(batch.context_width);
  const auto size = static_cast<std::size_t>(kernels::SlotBatchView::block_size(slot_tokens, batch.context_width));
  if (batch.num_tokens() > slot_tokens || block.size() < size)
    throw SystemError("pack_slot: a batch of " + std::to_string(batch.num_tokens()) +
                      " tokens does not fit a slot of " + std::to_string(slot_tokens));
  // Empty requests hash nothing and are left out, so a slot never holds more requests than
  // tokens; the request after the last holds the padding tokens, any after it are empty.
  std::copy(batch.tokens.begin(), batch.tokens.end(), block.begin());
  const std::span<std::int64_t> bounds = block.subspan(t, t + 2);
  const std::span<std::int64_t> contexts = block.subspan(2 * t + 2, (t + 1) * width);
  std::size_t kept = 0;
  for (std::int64_t r = 0; r < batch.num_requests(); ++r) {
    const auto begin = batch.query_start_loc[static_cast<std::size_t>(r)];
    if (batch.query_start_loc[static_cast<std::size_t>(r) + 1] == begin) continue;
    bounds[kept] = begin;
    std::copy_n(batch.context.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * width), width,
                contexts.begin() + static_cast<std::ptrdiff_t>(kept * width));
    ++kept;
  }
  bounds[kept] = batch.num_tokens();  // the padding request's start
  // The rest of each run is padding, as the layout says (a copy that reads only the data
  // writes the same).
  const kernels::PaddedBlock layout = kernels::SlotBatchView::layout(
      slot_tokens, batch.context_width, batch.num_tokens(), static_cast<std::int64_t>(kept));
  std::size_t at = 0;
  for (int r = 0; r < layout.runs; ++r) {
    std::fill(block.begin() + static_cast<std::ptrdiff_t>(at + static_cast<std::size_t>(layout.used[r])),
              block.begin() + static_cast<std::ptrdiff_t>(at + static_cast<std::size_t>(layout.words[r])),
              layout.fill[r]);
    at += static_cast<std::size_t>(layout.words[r]);
  }
  return layout;
}

void validate_batch(const TokenBatch& batch, const std::string& source) {
  if (batch.query_start_loc.empty() || batch.query_start_loc.front() != 0)
    throw InputError(source + ": query_start_loc must start at 0");
  if (!std::is_sorted(batch.query_start_loc.begin(), batch.query_start_loc.end()))
    throw InputError(source + ": query_start_loc must be non-decreasing");
  if (batch.query_start_loc.back() != batch.num_tokens())
    throw InputError(source + ": query_start_loc ends at " + std::to_string(batch.query_start_loc.back()) +
                     " but there are " + std::to_string(batch.num_tokens()) + " tokens");
  if (static_cast<std::int64_t>(batch.context.size()) != batch.num_requests() * batch.context_width)
    throw InputError(source + ": expected " + std::to_string(batch.context_width) + " context tokens per request");
}

}  // namespace pleshard
