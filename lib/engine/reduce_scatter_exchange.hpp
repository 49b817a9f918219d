#pragma once
// The reduce-scatter strategy: every rank looks up the ETP group's slots
// (engine/slot_lookup.hpp), then each layer's partial rows are reduce-scattered over the
// ETP group so that every rank receives only its 1/TP share of its own DP slot, and the TP
// ranks all-gather their shares. Under sequence parallelism (ETP = TP) the share is what a
// rank keeps, and this is also the gather-reduce strategy's combine there.

#include "engine/slot_exchange.hpp"

namespace pleshard {

class ReduceScatterCombine final : public PartialCombine {
 public:
  // Over my ETP group (the TP group under sequence parallelism), which must have more than
  // one rank. Slots of several TP ranks are padded to a multiple of TP by the engine
  // (SystemError otherwise), so that every share is whole.
  explicit ReduceScatterCombine(const ExchangeContext& context);
  [[nodiscard]] int pad_to() const override;
  [[nodiscard]] bool in_place() const override { return false; }
  void run(const PartialRows& partial, int out_slot, StepMarks& marks, ExchangeTraffic& step,
           std::vector<EmbeddingView>& views) override;

 private:
  [[nodiscard]] bool sequence_parallel() const { return ctx_.comms.tp != nullptr && ctx_.topology.sequence_parallel(); }

  ExchangeContext ctx_;
  Communicator* group_ = nullptr;
  Communicator* tp_gather_ = nullptr;  // my DP rank's TP ranks, where each needs the whole slot
  RegionRing received_;                // [layers][share][width]
  RegionRing gathered_;                // with a TP gather: [layers][TP x share][width]
};

}  // namespace pleshard
