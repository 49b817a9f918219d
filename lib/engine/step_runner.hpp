#pragma once
// An engine's steps, one after the other, over its session (engine/engine_session.hpp): the
// step plan in a workspace sized once, the exchange strategy's run of each step, the CUDA
// graphs that replay them, the marks that time them, and the host's waits for them — at most
// two in flight, each watched against the collective timeout. What a step does is the
// exchange's (engine/exchange.hpp); this is when and where it runs.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "engine/engine_options.hpp"
#include "engine/engine_session.hpp"
#include "engine/exchange.hpp"
#include "engine/step_graphs.hpp"
#include "engine/step_marks.hpp"
#include "engine/step_plan.hpp"
#include "exec/workspace.hpp"
#include "hash/token_batch.hpp"

namespace pleshard {

class StreamFence;
class TableReadiness;
class Worker;

class StepRunner {
 public:
  // Collective over session.world(): sizes the step's workspace for the session's options
  // (checked against the space's memory before it is allocated, as the row caches are),
  // uploads the hash parameters and reserves the stores (a cache's static part is read
  // here, its seconds added to the session's load in stats()).
  explicit StepRunner(EngineSession& session);
  ~StepRunner();
  StepRunner(const StepRunner&) = delete;
  StepRunner& operator=(const StepRunner&) = delete;

  // PleEngine's step interface (engine/ple_engine.hpp says what each does).
  StepOutput forward(const TokenBatch& batch, std::span<const std::int64_t> group_tokens, const NextStep& next);
  void start(const TokenBatch& batch, std::span<const std::int64_t> group_tokens);
  EmbeddingView wait_table(int table, void* stream);
  StepOutput finish();
  [[nodiscard]] bool started() const { return started_.has_value(); }
  void wait();
  void wait_until(const SpaceEvent& done);
  void wait_for(void* event);
  void share_with(const StepOutput& out, void* stream);
  void use_cuda_graphs(bool on);

  [[nodiscard]] const EngineStats& stats() const { return stats_; }
  [[nodiscard]] const Exchange& exchange() const { return *exchange_; }
  [[nodiscard]] std::shared_ptr<const void> output_memory() const;

 private:
  [[nodiscard]] std::int64_t slot_tokens(const TokenBatch& batch, std::span<const std::int64_t> group_tokens);
  [[nodiscard]] std::int64_t bucket_for(std::int64_t tokens) const;
  // `tokens` rounded up to a whole number of slot_multiple_.
  [[nodiscard]] std::int64_t padded_slot(std::int64_t tokens) const {
    return (tokens + slot_multiple_ - 1) / slot_multiple_ * slot_multiple_;
  }
  void settle();
  // Collective over the session's world: begins_ahead_ where every rank's is, the store told,
  // and beside_decode_ where every rank's exchange answers so.
  void agree_on_halves();
  // Tests: the fault plan's stall (core/fault_plan.hpp) at its step and rank, as a hung
  // kernel or peer would stall the GPU stream.
  void inject_stall(std::uint64_t step);
  // The first half of eager step `step` (Exchange::begin), its batch packed as a slot of
  // `slot` tokens.
  void begin_step(const TokenBatch& batch, std::int64_t slot, std::uint64_t step);
  // This step in the exchange's two halves (begun in the forward() before where `begun`),
  // with `next` begun between them.
  void run_in_halves(const TokenBatch& batch, std::int64_t slot, bool begun, const NextStep& next, StepMarks& marks,
                     StepOutput& out);
  // SystemError unless `batch` and `group_tokens` are the step begun ahead.
  void check_begun(const TokenBatch& batch, std::span<const std::int64_t> group_tokens) const;

  EngineSession& session_;
  const EngineOptions& options_;  // the session's
  bool cuda_graphs_ = false;
  // Eager steps run in the exchange's two halves, a next step named begun between them:
  // where the options ask for it, the engine starts without CUDA graphs, and the exchange
  // and store can (Exchange::begins_ahead).
  bool begins_ahead_ = false;
  // Where steps begin ahead: 1 at the slot sizes (index: tokens) at which the next step is
  // begun beside this one's decode (Exchange::begins_beside_decode on every rank).
  std::vector<std::uint8_t> beside_decode_;
  std::int64_t slot_multiple_ = 1;  // slots padded to a multiple of this (reduce-scatter over TP)
  // The workspace is shared with output_memory()'s holders, who may outlive the runner.
  std::shared_ptr<Workspace> workspace_;
  std::unique_ptr<StepPlan> plan_;
  std::unique_ptr<Exchange> exchange_;
  std::unique_ptr<StepGraphs> graphs_;   // the steps' CUDA graphs, where they are replayed
  std::unique_ptr<StepMarks> marks_[2];  // the last two steps'
  std::uint64_t next_step_ = 0;
  // The next step, begun inside the last (NextStep): what its forward() must pass.
  struct Begun {
    TokenBatch batch;
    std::vector<std::int64_t> group_tokens;
    std::int64_t slot = 0;  // its slot's tokens, as agreed
  };
  std::optional<Begun> begun_;
  // Per output slot, the consumer streams (share_with) its next step waits for.
  std::vector<std::vector<void*>> consumers_;
  std::unique_ptr<StreamFence> consumer_fence_;
  // A started step (start()): its batch, run on the step thread, the output slot it writes
  // (the step thread moves next_step_ on), and its output once run.
  struct Started {
    TokenBatch batch;
    std::vector<std::int64_t> group_tokens;
    std::size_t slot = 0;
    StepOutput out;
  };
  std::optional<Started> started_;
  std::unique_ptr<TableReadiness> readiness_;  // before the exchange, which keeps a pointer to it
  std::unique_ptr<Worker> step_thread_;
  EngineStats stats_;
};

}  // namespace pleshard
