#pragma once
// The batch job's steps in order, part after part, as my rank runs them. Scheduling is
// deterministic, so every rank computes every DP rank's share of a part (each part's
// requests spread over the DP ranks by tokens, then packed into steps): my ETP group steps
// together until its busiest DP rank is done, and each step's token counts of the group
// and the progress of all ranks are known without a collective.

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "hash/token_batch.hpp"
#include "io/requests.hpp"
#include "job/step_scheduler.hpp"
#include "model/model_config.hpp"

namespace pleshard {

// One DP rank's share of a part and its steps.
struct RankSchedule {
  std::vector<Request> requests;              // in part order
  std::vector<std::size_t> global;            // each one's index among all requests
  std::vector<std::vector<StepSlice>> steps;  // slices index `requests`
  [[nodiscard]] std::int64_t tokens(std::size_t step) const;
  // Requests whose last token is in the step.
  [[nodiscard]] std::int64_t finished(std::size_t step) const;
};

// Every DP rank's share of requests [part.first, part.second), in DP rank order.
[[nodiscard]] std::vector<RankSchedule> schedule_part(std::span<const Request> requests,
                                                      std::pair<std::size_t, std::size_t> part, int dp,
                                                      const ModelConfig& config, const StepSchedule& schedule);

// A step of the job on my rank (its batch may be empty: my DP rank done before its group).
struct JobStep {
  std::size_t part = 0;
  TokenBatch batch;
  // My batch's request slices, each with the output row of its first token.
  std::vector<StepSlice> slices;
  std::vector<std::int64_t> slice_rows;
  std::vector<std::int64_t> group_tokens;  // each DP rank of my ETP group's tokens, in slot order
  // Every DP rank's tokens of the step, and the requests it finishes: the job's progress
  // within a part (other ETP groups may take more steps than mine, or take steps in a part
  // where mine takes none: the job counts a part's whole work when it is recorded).
  std::int64_t tokens_done = 0;
  std::int64_t requests_done = 0;
};

class JobSteps {
 public:
  // The steps of parts [first_part, parts.size()) of `requests`; `qsl`: the output row of
  // each request's first token (and the total after the last). My ranks: DP rank `dp_rank`
  // of `dp`, in ETP group `etp_group` of `edp` DP ranks.
  JobSteps(std::span<const Request> requests, std::vector<std::pair<std::size_t, std::size_t>> parts,
           std::size_t first_part, std::span<const std::int64_t> qsl, int dp, int dp_rank, int etp_group, int edp,
           const ModelConfig& config, const StepSchedule& schedule);
  // The next step, or nothing after the last part's last.
  [[nodiscard]] std::optional<JobStep> next();

 private:
  std::span<const Request> requests_;
  std::vector<std::pair<std::size_t, std::size_t>> parts_;
  std::span<const std::int64_t> qsl_;
  int dp_;
  int dp_rank_;
  int group_first_;  // my ETP group's first DP rank
  int edp_;
  const ModelConfig& config_;
  StepSchedule schedule_;
  std::size_t part_;  // the part being stepped
  std::vector<RankSchedule> ranks_;
  std::optional<StepScheduler> mine_;  // my DP rank's batches of the part
  std::size_t step_ = 0;               // the next step of the part
  std::size_t part_steps_ = 0;         // my group's steps in the part
};

}  // namespace pleshard
