#pragma once
// Packs requests into steps like a serving engine: up to `step_tokens` tokens per step
// (chunked prefill), and the last `decode_tokens` tokens of each request one per step, as
// decoding would. Carries each request's n-gram context from step to step.

#include <cstdint>
#include <span>
#include <vector>

#include "hash/token_batch.hpp"
#include "io/requests.hpp"

namespace pleshard {

// The most tokens a step may hold: a step's buffers grow with it, and past this they no
// longer fit any machine's memory for any model.
inline constexpr std::int64_t k_max_step_tokens = std::int64_t{1} << 24;

struct StepSchedule {
  std::int64_t step_tokens = 8192;  // token budget of one step (1 to k_max_step_tokens)
  std::int64_t decode_tokens = 0;   // tail of each request fed one token per step
};

// One request's part of a step.
struct StepSlice {
  std::int64_t request = 0;   // index into the scheduler's request list
  std::int64_t position = 0;  // first token's position within the request
  std::int64_t length = 0;
};

// Owner rank of each request: largest requests first onto the least-loaded rank, so
// token counts are balanced; deterministic.
[[nodiscard]] std::vector<int> assign_requests_by_tokens(std::span<const Request> requests, int ranks);

class StepScheduler {
 public:
  StepScheduler(std::span<const Request> requests, int ngram_size, StepSchedule schedule);

  // Fills `batch` and `slices` with the next step; false when every token was scheduled.
  // Requests are served in order; a request in its decode tail takes one token per step.
  bool next_step(TokenBatch& batch, std::vector<StepSlice>& slices);

  [[nodiscard]] std::int64_t tokens_done() const { return tokens_done_; }

 private:
  std::span<const Request> requests_;
  StepSchedule schedule_;
  std::vector<std::int64_t> position_;  // tokens of each request already scheduled
  std::vector<std::int64_t> context_;   // context rows, (N-1) per request
  int context_width_;
  std::size_t first_open_ = 0;  // requests before it are finished
  std::int64_t tokens_done_ = 0;
};

}  // namespace pleshard
