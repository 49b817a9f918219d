#pragma once
// The gather-reduce and reduce-scatter strategies: every rank hashes the ETP group's tokens,
// looks up the rows it owns and the group combines the partial rows.

#include <cstdint>
#include <vector>

#include "engine/exchange.hpp"

namespace pleshard {

// vLLM's data flow: gather the ETP group's batches into slots (one all-gather of tokens for
// every layer), hash them, look up the ids I own (zeros elsewhere) with one fused decode
// of every layer, combine over ETP, keep my DP slot — or, with sequence parallelism
// (E = TP), reduce-scatter so each TP rank keeps 1/TP of the tokens. Partial results are
// combined as owned bits (ReduceOp::owned): each element has exactly one owner and every
// other rank contributes zero bits, so the result is the owner's value bit for bit (a
// float sum would turn the owner's -0.0 into +0.0).
//
// The reduce-scatter strategy is the same flow with the combine replaced: each layer's
// partial rows are reduce-scattered over the ETP group so that every rank receives only
// its 1/TP share of its own DP slot, and the TP ranks then all-gather their shares (none
// under sequence parallelism, where the share is what a rank keeps).
class GatherReduceExchange final : public Exchange {
 public:
  // `name`: the strategy asked for, where this flow stands in for it (a group of one rank,
  // where every strategy is the identity); null: this strategy's own.
  GatherReduceExchange(const ExchangeContext& context, bool reduce_scatter, const char* name = nullptr);
  [[nodiscard]] const char* name() const override { return name_; }
  void run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) override;
  [[nodiscard]] std::int64_t max_query_ids() const override;

 private:
  [[nodiscard]] bool sequence_parallel() const { return ctx_.comms.tp != nullptr && ctx_.topology.sequence_parallel(); }
  // Combines by reduce-scatter: under sequence parallelism, or as the strategy.
  [[nodiscard]] bool scatters() const { return sequence_parallel() || (reduce_scatter_ && ctx_.comms.etp != nullptr); }

  ExchangeContext ctx_;
  bool reduce_scatter_;
  const char* name_;
  // Whichever of them a step's views point into is a ring of output slots.
  RegionRing partial_;   // [layers][slots x slot tokens (padded to TP)][width]
  RegionRing received_;  // reduce-scattered: [layers][share][width]
  RegionRing gathered_;  // reduce-scatter with TP > 1 (not sequence parallel): [layers][TP x share][width]
};

}  // namespace pleshard
