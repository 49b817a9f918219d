#pragma once
// The CUDA graphs of a job's steps: one per bucket of slot sizes and output slot, captured
// at the bucket's first step (the capture runs nothing) and replayed after. The packed batch
// reaches a graph's kernels from the pinned buffer the step was packed in: by a pull into the
// space, pointed at that buffer at each launch, or — a short step whose decode hashes its
// one slot — by the decode's own reads there, a node fewer; such a graph reads the buffer it
// was captured with, so those buckets have a graph per buffer. A replay moves what its
// captured run did, so the exchange's traffic and each communicator's calls are counted
// again at every replay.

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/exchange.hpp"
#include "engine/exchange_groups.hpp"
#include "engine/step_plan.hpp"
#include "exec/step_space.hpp"

namespace pleshard {

class StepGraphs {
 public:
  // `ids_per_token`: the ids a token has over every layer (heads x layers), for the traffic
  // a replay counts.
  StepGraphs(StepSpace& space, StepPlan& plan, Exchange& exchange, const ExchangeGroups& groups,
             std::int64_t ids_per_token);
  ~StepGraphs();
  StepGraphs(const StepGraphs&) = delete;
  StepGraphs& operator=(const StepGraphs&) = delete;

  // Enqueues the step of `bucket` tokens a slot (the plan packed for it) writing output slot
  // `out_slot`, captured first where it is new; its views, of `tokens` rows each.
  [[nodiscard]] std::vector<EmbeddingView> launch(std::int64_t bucket, int out_slot, std::int64_t tokens);

  [[nodiscard]] std::int64_t captured() const { return static_cast<std::int64_t>(graphs_.size()); }
  [[nodiscard]] std::int64_t replays() const { return replays_; }

 private:
  struct Graph;
  Graph& graph_for(std::int64_t bucket, int out_slot, std::int64_t tokens);

  StepSpace& space_;
  StepPlan& plan_;
  Exchange& exchange_;
  const ExchangeGroups& groups_;
  std::int64_t ids_per_token_;
  // By bucket, output slot and the pinned buffer the graph reads (null: it pulls from any).
  std::map<std::tuple<std::int64_t, int, const void*>, std::unique_ptr<Graph>> graphs_;
  std::int64_t replays_ = 0;
};

}  // namespace pleshard
