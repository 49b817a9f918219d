#pragma once
// The strategies that combine partial rows: every rank looks up the ETP group's slots
// (engine/slot_lookup.hpp: gather, hash, fetch, decode — the rows it owns, zeros for the
// rest) and the group combines the partial rows. The combine is what tells the strategies
// apart: one all-reduce (engine/gather_reduce_exchange.hpp) or reduce-scatters into shares
// (engine/reduce_scatter_exchange.hpp). Partial rows are combined as owned bits
// (ReduceOp::owned): each element has exactly one owner and every other rank contributes
// zero bits, so the result is the owner's value bit for bit (a float sum would turn the
// owner's -0.0 into +0.0).

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engine/begun_steps.hpp"
#include "engine/exchange.hpp"
#include "engine/slot_lookup.hpp"

namespace pleshard {

// A step's partial rows of every layer as its combine takes them: layer_bytes apart from
// `data`, at the step's slot size, for `tokens` of my DP rank's. The combine reads the step's
// sizes from here, not from the plan: a step begun ahead is combined after the next step's
// begin() has packed the plan anew.
struct PartialRows {
  std::uint8_t* data = nullptr;
  std::size_t layer_bytes = 0;
  std::int64_t slot_tokens = 0;
  std::int64_t tokens = 0;
};

// The last stage: the partial rows of every layer combined over the group, and the views of
// my tokens' embeddings.
class PartialCombine {
 public:
  virtual ~PartialCombine() = default;
  // Slots padded to a multiple of this many tokens, so that the combine's shares are whole.
  [[nodiscard]] virtual int pad_to() const { return 1; }
  // Whether my embeddings are the partial rows themselves (combined in place), which are
  // then held once per output slot.
  [[nodiscard]] virtual bool in_place() const = 0;
  // Enqueues the combine of `partial`, marks the combine phase and counts what it sends in
  // `step`.
  virtual void run(const PartialRows& partial, int out_slot, StepMarks& marks, ExchangeTraffic& step,
                   std::vector<EmbeddingView>& views) = 0;
  // Where the combine moves nothing (a group of one rank, in place): my embeddings' views
  // in `partial` before it runs, and true; false where the combine must run first.
  [[nodiscard]] virtual bool views_before(const PartialRows& partial, std::vector<EmbeddingView>& views) const {
    (void)partial;
    (void)views;
    return false;
  }
};

class SlotExchange final : public Exchange {
 public:
  // The combine's workspace regions come before the lookup's (the lookup asks the combine how
  // to pad and hold its partial rows); `name`: the strategy's.
  SlotExchange(const ExchangeContext& context, std::unique_ptr<PartialCombine> combine, const char* name);
  [[nodiscard]] const char* name() const override { return name_; }
  void run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) override;
  [[nodiscard]] std::int64_t max_query_ids() const override { return lookup_.max_query_ids(); }
  // Where the store fetches ahead: the pinned tier's next gather runs beside this decode, in
  // a group of several ranks too (the next step's slots gathered then, on every rank alike:
  // begins_beside_decode).
  [[nodiscard]] bool begins_ahead() const override { return store_.fetches_ahead(); }
  [[nodiscard]] bool begins_beside_decode(std::int64_t slot_tokens) const override {
    return lookup_.begins_beside_decode(slot_tokens);
  }
  void begin(std::int64_t tokens, StepMarks& marks) override;
  void finish(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
              const std::function<void()>& fetched) override;
  void abandon() override { begun_.clear(); }

 private:
  // A step begun: what its finish needs once the next step's begin() has packed the plan
  // anew (its combine takes the step's sizes from the fetch: PartialRows).
  struct Begun {
    std::int64_t tokens = 0;
    ExchangeTraffic step;
    SlotLookup::Fetch fetch;
  };

  std::unique_ptr<PartialCombine> combine_;
  SlotLookup lookup_;
  TableReadiness* readiness_;
  RowStore& store_;
  const StepPlan& plan_;
  const char* name_;
  std::int64_t heads_x_layers_ = 0;
  BegunSteps<Begun> begun_;
};

}  // namespace pleshard
