#include "job/step_scheduler.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "core/option_names.hpp"

namespace pleshard {

std::vector<int> assign_requests_by_tokens(std::span<const Request> requests, int ranks) {
  std::vector<std::size_t> order(requests.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return requests[a].tokens.size() > requests[b].tokens.size(); });
  std::vector<std::int64_t> load(static_cast<std::size_t>(ranks), 0);
  std::vector<int> owner(requests.size(), 0);
  for (std::size_t r : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    owner[r] = static_cast<int>(least);
    load[static_cast<std::size_t>(least)] += static_cast<std::int64_t>(requests[r].tokens.size());
  }
  return owner;
}

StepScheduler::StepScheduler(std::span<const Request> requests, int ngram_size, StepSchedule schedule)
    : requests_(requests), schedule_(schedule), position_(requests.size(), 0), context_width_(ngram_size - 1) {
  if (schedule_.step_tokens < 1 || schedule_.step_tokens > k_max_step_tokens)
    throw InputError(option_name(Option::step_tokens) + " must be from 1 to " + std::to_string(k_max_step_tokens) +
                     ", got " + std::to_string(schedule_.step_tokens));
  if (schedule_.decode_tokens < 0)
    throw InputError(option_name(Option::decode_tokens) + " must be >= 0, got " +
                     std::to_string(schedule_.decode_tokens));
  const auto fresh = fresh_context(ngram_size);
  for (std::size_t r = 0; r < requests.size(); ++r) context_.insert(context_.end(), fresh.begin(), fresh.end());
}

bool StepScheduler::next_step(TokenBatch& batch, std::vector<StepSlice>& slices) {
  batch = TokenBatch(context_width_ + 1);
  slices.clear();
  std::int64_t budget = schedule_.step_tokens;
  while (first_open_ < requests_.size() &&
         position_[first_open_] == static_cast<std::int64_t>(requests_[first_open_].tokens.size()))
    ++first_open_;

  for (std::size_t r = first_open_; r < requests_.size() && budget > 0; ++r) {
    const auto& tokens = requests_[r].tokens;
    const auto size = static_cast<std::int64_t>(tokens.size());
    const std::int64_t remaining = size - position_[r];
    if (remaining == 0) continue;
    const std::int64_t prefill = remaining - std::min(remaining, schedule_.decode_tokens);
    const std::int64_t take = prefill > 0 ? std::min(prefill, budget) : 1;

    const std::span<const std::int64_t> step_tokens(tokens.data() + position_[r], static_cast<std::size_t>(take));
    const std::span<std::int64_t> context(context_.data() + r * context_width_,
                                          static_cast<std::size_t>(context_width_));
    batch.add_request(step_tokens, context);
    slices.push_back({static_cast<std::int64_t>(r), position_[r], take});
    advance_context(context, step_tokens);
    position_[r] += take;
    budget -= take;
  }
  tokens_done_ += batch.num_tokens();
  return !slices.empty();
}

}  // namespace pleshard
