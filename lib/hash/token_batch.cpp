#include "hash/token_batch.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace pleshard {

void TokenBatch::add_request(std::span<const std::int64_t> step_tokens,
                             std::span<const std::int64_t> request_context) {
  if (static_cast<int>(request_context.size()) != context_width)
    throw InputError("request " + std::to_string(num_requests()) + ": context has " +
                     std::to_string(request_context.size()) + " tokens, expected " +
                     std::to_string(context_width));
  tokens.insert(tokens.end(), step_tokens.begin(), step_tokens.end());
  query_start_loc.push_back(static_cast<std::int64_t>(tokens.size()));
  context.insert(context.end(), request_context.begin(), request_context.end());
}

kernels::NgramBatchView TokenBatch::view() const {
  return {tokens.data(), num_tokens(), query_start_loc.data(), num_requests(), context.data()};
}

std::vector<std::int64_t> fresh_context(int ngram_size, std::int64_t eos_token_id) {
  return std::vector<std::int64_t>(static_cast<std::size_t>(ngram_size - 1), eos_token_id);
}

void advance_context(std::span<std::int64_t> context, std::span<const std::int64_t> step_tokens) {
  const std::size_t width = context.size();
  const std::size_t take = std::min(width, step_tokens.size());
  // Keep the newest (width - take) context tokens, then append the last `take` step tokens.
  std::shift_left(context.begin(), context.end(), static_cast<std::ptrdiff_t>(take));
  std::copy(step_tokens.end() - static_cast<std::ptrdiff_t>(take), step_tokens.end(),
            context.end() - static_cast<std::ptrdiff_t>(take));
}

void validate_batch(const TokenBatch& batch, const std::string& source) {
  if (batch.query_start_loc.empty() || batch.query_start_loc.front() != 0)
    throw InputError(source + ": query_start_loc must start at 0");
  if (!std::is_sorted(batch.query_start_loc.begin(), batch.query_start_loc.end()))
    throw InputError(source + ": query_start_loc must be non-decreasing");
  if (batch.query_start_loc.back() != batch.num_tokens())
    throw InputError(source + ": query_start_loc ends at " +
                     std::to_string(batch.query_start_loc.back()) + " but there are " +
                     std::to_string(batch.num_tokens()) + " tokens");
  if (static_cast<std::int64_t>(batch.context.size()) !=
      batch.num_requests() * batch.context_width)
    throw InputError(source + ": expected " + std::to_string(batch.context_width) +
                     " context tokens per request");
}

}  // namespace pleshard
