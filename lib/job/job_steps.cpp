#include "job/job_steps.hpp"

#include <algorithm>

namespace pleshard {

std::int64_t RankSchedule::tokens(std::size_t step) const {
  std::int64_t n = 0;
  if (step < steps.size())
    for (const StepSlice& s : steps[step]) n += s.length;
  return n;
}

std::int64_t RankSchedule::finished(std::size_t step) const {
  std::int64_t n = 0;
  if (step < steps.size())
    for (const StepSlice& s : steps[step])
      n += s.position + s.length ==
           static_cast<std::int64_t>(requests[static_cast<std::size_t>(s.request)].tokens.size());
  return n;
}

std::vector<RankSchedule> schedule_part(std::span<const Request> requests, std::pair<std::size_t, std::size_t> part,
                                        int dp, const ModelConfig& config, const StepSchedule& schedule) {
  const std::span<const Request> span = requests.subspan(part.first, part.second - part.first);
  const std::vector<int> owner = assign_requests_by_tokens(span, dp);
  std::vector<RankSchedule> ranks(static_cast<std::size_t>(dp));
  for (std::size_t r = 0; r < span.size(); ++r) {
    RankSchedule& rank = ranks[static_cast<std::size_t>(owner[r])];
    rank.requests.push_back(span[r]);
    rank.global.push_back(part.first + r);
  }
  for (RankSchedule& rank : ranks) {
    StepScheduler scheduler(rank.requests, config.ngram_size, schedule);
    TokenBatch batch(config.ngram_size);
    std::vector<StepSlice> slices;
    while (scheduler.next_step(batch, slices)) rank.steps.push_back(slices);
  }
  return ranks;
}

JobSteps::JobSteps(std::span<const Request> requests, std::vector<std::pair<std::size_t, std::size_t>> parts,
                   std::size_t first_part, std::span<const std::int64_t> qsl, int dp, int dp_rank, int etp_group,
                   int edp, const ModelConfig& config, const StepSchedule& schedule)
    : requests_(requests),
      parts_(std::move(parts)),
      qsl_(qsl),
      dp_(dp),
      dp_rank_(dp_rank),
      group_first_(etp_group * edp),
      edp_(edp),
      config_(config),
      schedule_(schedule),
      part_(first_part) {}

std::optional<JobStep> JobSteps::next() {
  // Past the part's last step (or at the first part): the next part with steps.
  while (step_ == part_steps_) {
    if (mine_) ++part_;
    if (part_ >= parts_.size()) return std::nullopt;
    ranks_ = schedule_part(requests_, parts_[part_], dp_, config_, schedule_);
    mine_.emplace(ranks_[static_cast<std::size_t>(dp_rank_)].requests, config_.ngram_size, schedule_);
    step_ = 0;
    part_steps_ = 0;
    for (int s = 0; s < edp_; ++s)
      part_steps_ = std::max(part_steps_, ranks_[static_cast<std::size_t>(group_first_ + s)].steps.size());
  }
  JobStep step;
  step.part = part_;
  // An empty batch (next_step resets it) once my DP rank is done before its group.
  (void)mine_->next_step(step.batch, step.slices);
  const RankSchedule& mine = ranks_[static_cast<std::size_t>(dp_rank_)];
  for (const StepSlice& slice : step.slices)
    step.slice_rows.push_back(qsl_[mine.global[static_cast<std::size_t>(slice.request)]] + slice.position);
  for (int s = 0; s < edp_; ++s)
    step.group_tokens.push_back(ranks_[static_cast<std::size_t>(group_first_ + s)].tokens(step_));
  for (const RankSchedule& rank : ranks_) {
    step.tokens_done += rank.tokens(step_);
    step.requests_done += rank.finished(step_);
  }
  ++step_;
  return step;
}

}  // namespace pleshard
