#pragma once
// The gather-reduce strategy, vLLM's data flow and the reference: every rank looks up the
// ETP group's slots (engine/slot_lookup.hpp) and one all-reduce of every layer combines the
// partial rows; each rank keeps its DP slot. Under sequence parallelism its combine is the
// reduce-scatter over TP (engine/reduce_scatter_exchange.hpp); in a group of one rank it
// combines nothing, and stands in for every strategy there (make_exchange).

#include "engine/slot_exchange.hpp"

namespace pleshard {

class AllReduceCombine final : public PartialCombine {
 public:
  explicit AllReduceCombine(const ExchangeContext& context) : ctx_(context) {}
  [[nodiscard]] bool in_place() const override { return true; }
  void run(const PartialRows& partial, int out_slot, StepMarks& marks, ExchangeTraffic& step,
           std::vector<EmbeddingView>& views) override;
  [[nodiscard]] bool views_before(const PartialRows& partial, std::vector<EmbeddingView>& views) const override;

 private:
  // My DP rank's slot of every layer in `partial`.
  void my_views(const PartialRows& partial, std::vector<EmbeddingView>& views) const;

  ExchangeContext ctx_;
};

}  // namespace pleshard
