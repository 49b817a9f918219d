#pragma once
// The exchange of a step: from my DP rank's batch, loaded in the step plan, to my
// embeddings of every PLE layer. A strategy behind one interface, each a different plan
// over the same data (which tokens a rank hashes, which rows it fetches, what it sends);
// vLLM's gather-reduce flow is the first and the reference. Every call only enqueues work
// on the step space's stream (collectives included, on device backends).

#include <cstdint>
#include <memory>
#include <vector>

#include "dist/communicator.hpp"
#include "dist/topology.hpp"
#include "engine/step_marks.hpp"
#include "engine/step_plan.hpp"
#include "exec/workspace.hpp"
#include "store/row_store.hpp"

namespace pleshard {

// One layer's embeddings of one step, where the engine left them: `rows` rows of `width`
// values of `dtype`, row-major, for tokens [first, first + rows) of my DP rank's step.
struct EmbeddingView {
  const void* data = nullptr;
  std::int64_t first = 0;
  std::int64_t rows = 0;
  std::int64_t width = 0;
  OutDtype dtype = OutDtype::bf16;
  [[nodiscard]] std::size_t bytes() const {
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(width) * kernels::out_bytes(dtype);
  }
};

// The communicators of an exchange on step-space memory; null for a group of one rank,
// which needs none.
struct ExchangeComms {
  Communicator* etp = nullptr;     // my ETP group
  Communicator* etp_dp = nullptr;  // my ETP group's ranks with my TP rank (one per slot)
  Communicator* tp = nullptr;      // my DP rank's TP ranks
};

// What every strategy works with.
struct ExchangeContext {
  StepSpace& space;
  Workspace& workspace;
  StepPlan& plan;
  RowStore& store;
  Topology topology;
  ExchangeComms comms;
  OutDtype dtype;
  std::int64_t width;  // ple_embed_dim: values per token and layer
};

class Exchange {
 public:
  virtual ~Exchange() = default;
  [[nodiscard]] virtual const char* name() const = 0;
  // Enqueues one step: my DP rank's `tokens` tokens are loaded in the plan as a slot of
  // plan.slot_tokens() (the group's largest count). Fills views[d] for every layer d;
  // they stay valid until the next run.
  virtual void run(std::int64_t tokens, StepMarks& marks, std::vector<EmbeddingView>& views) = 0;
};

// vLLM's data flow: gather the ETP group's batches into slots (one all-gather of tokens for
// every layer), hash them, look up the ids I own (zeros elsewhere) with one fused decode
// of every layer, combine over ETP, keep my DP slot — or, with sequence parallelism
// (E = TP), reduce-scatter so each TP rank keeps 1/TP of the tokens. Partial results are
// combined as owned bits (ReduceOp::owned): each element has exactly one owner and every
// other rank contributes zero bits, so the result is the owner's value bit for bit (a
// float sum would turn the owner's -0.0 into +0.0).
class GatherReduceExchange final : public Exchange {
 public:
  explicit GatherReduceExchange(const ExchangeContext& context);
  [[nodiscard]] const char* name() const override { return "gather-reduce"; }
  void run(std::int64_t tokens, StepMarks& marks, std::vector<EmbeddingView>& views) override;

 private:
  [[nodiscard]] bool sequence_parallel() const { return ctx_.comms.tp != nullptr && ctx_.topology.sequence_parallel(); }

  ExchangeContext ctx_;
  Workspace::Region partial_;   // [layers][slots x slot tokens (padded to TP)][width]
  Workspace::Region received_;  // sequence parallel: [layers][slice][width]
};

// For stores that hold every row (disk): each rank looks up the rows of its own tokens (its
// sequence slice under sequence parallelism); nothing is exchanged.
class LocalExchange final : public Exchange {
 public:
  explicit LocalExchange(const ExchangeContext& context);
  [[nodiscard]] const char* name() const override { return "local"; }
  void run(std::int64_t tokens, StepMarks& marks, std::vector<EmbeddingView>& views) override;

 private:
  ExchangeContext ctx_;
  Workspace::Region out_;  // [layers][slot tokens][width]
};

// Tokens [first, first + count) that TP rank `tp_rank` keeps of `tokens` under sequence
// parallelism: slices of ceil(tokens / tp) tokens.
[[nodiscard]] RowRange sequence_slice(std::int64_t tokens, int tp, int tp_rank);

}  // namespace pleshard
