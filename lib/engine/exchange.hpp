#pragma once
// The exchange of one PLE layer: from my DP rank's ids to my embeddings. A strategy behind
// one interface, so that others can be measured against vLLM's. Ids and partial results
// live in the engine's step space; the result is copied to host memory for the job.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dist/communicator.hpp"
#include "dist/topology.hpp"
#include "exec/step_space.hpp"
#include "store/table_tier.hpp"

namespace pleshard {

// Seconds per phase as the host sees them. On a GPU, asynchronous work is counted in the
// phase whose call waits for it (collectives wait for the lookups queued before them).
struct PhaseTimes {
  double hash = 0;
  double exchange = 0;
  double lookup = 0;
  double write = 0;
  // The step's embeddings copied to the host, with what GPU work the step still had queued.
  double collect = 0;
  double graph = 0;  // CUDA graph replays: hash, exchange, lookup and collect together
};

// My embeddings after the exchange: tokens [first, first + count) of my DP rank's step,
// each ple_embed_dim values of the output dtype.
struct ExchangeResult {
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::vector<std::uint8_t> embeddings;
};

// One step runs begin_step, then start() for every layer, then finish() for every layer
// (so that a tier's background lookup of one layer overlaps the collectives of others),
// then collect() for every layer. start() and finish() only enqueue work on the space's
// stream, so a step begun with begin_fixed_step() can be captured in a CUDA graph.
class Exchange {
 public:
  virtual ~Exchange() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  // My DP rank's token count this step. Collective over my ETP group (host control values).
  virtual void begin_step(std::int64_t tokens) = 0;
  // A step of exactly `tokens` tokens on every rank, agreed beforehand: no collective.
  virtual void begin_fixed_step(std::int64_t tokens) = 0;
  // ids: my DP rank's [tokens x heads] in the step space, free to reuse on return.
  virtual void start(int layer, const std::int64_t* ids, int heads, TableTier& table, OutDtype dtype,
                     PhaseTimes& times) = 0;
  virtual void finish(int layer, TableTier& table, OutDtype dtype, PhaseTimes& times) = 0;
  // Copies my embeddings of the step's first `tokens` tokens to the host (waits).
  virtual void collect(int layer, std::int64_t tokens, ExchangeResult& out) = 0;
};

// The communicators of an exchange: data collectives on step-space memory, and a host
// one for the step's control values (the slot size).
struct ExchangeComms {
  Communicator& etp;
  Communicator& etp_dp;
  Communicator& tp;
  Communicator& control;  // host memory, over my ETP group
};

// vLLM's data flow: gather the ETP group's DP id blocks into slots of the largest
// token count (padding ids are row 0, their results dropped), look up the ids I own (zeros
// elsewhere), combine over ETP, keep my DP slot — or, with sequence parallelism (E = TP),
// reduce-scatter so each TP rank keeps 1/TP of the tokens.
// Partial results are combined as owned bits (ReduceOp::owned): each element has exactly
// one owner and every other rank contributes zero bits, so the result is the owner's value
// bit for bit (a float sum would turn the owner's -0.0 into +0.0).
class GatherReduceExchange final : public Exchange {
 public:
  GatherReduceExchange(StepSpace& space, const ExchangeComms& comms, const Topology& topology, int layers);
  [[nodiscard]] std::string name() const override { return "gather-reduce"; }
  void begin_step(std::int64_t tokens) override;
  void begin_fixed_step(std::int64_t tokens) override { tokens_ = slot_ = tokens; }
  void start(int layer, const std::int64_t* ids, int heads, TableTier& table, OutDtype dtype,
             PhaseTimes& times) override;
  void finish(int layer, TableTier& table, OutDtype dtype, PhaseTimes& times) override;
  void collect(int layer, std::int64_t tokens, ExchangeResult& out) override;

 private:
  StepSpace& space_;
  ExchangeComms comms_;
  Topology topology_;
  std::int64_t tokens_ = 0;
  std::int64_t slot_ = 0;
  SpaceBuffer slot_ids_;
  SpaceBuffer gathered_ids_;
  std::vector<SpaceBuffer> partial_;  // per layer: in flight between start and finish
  std::vector<std::size_t> token_bytes_;  // per layer: bytes of one token's embedding
  std::vector<SpaceBuffer> received_;  // per layer: my sequence slice after the reduce-scatter
};

// For tiers that hold every row (disk): each rank looks up its own tokens (its sequence
// slice under sequence parallelism); nothing is exchanged.
class LocalExchange final : public Exchange {
 public:
  LocalExchange(StepSpace& space, const Topology& topology, int layers);
  [[nodiscard]] std::string name() const override { return "local"; }
  void begin_step(std::int64_t tokens) override { tokens_ = tokens; }
  void begin_fixed_step(std::int64_t tokens) override { tokens_ = tokens; }
  void start(int layer, const std::int64_t* ids, int heads, TableTier& table, OutDtype dtype,
             PhaseTimes& times) override;
  void finish(int layer, TableTier& table, OutDtype dtype, PhaseTimes& times) override;
  void collect(int layer, std::int64_t tokens, ExchangeResult& out) override;

 private:
  [[nodiscard]] RowRange mine(std::int64_t tokens) const;  // the tokens of a step I keep

  StepSpace& space_;
  Topology topology_;
  std::int64_t tokens_ = 0;
  std::vector<SpaceBuffer> rows_;
  std::vector<std::size_t> token_bytes_;
};

// Tokens [first, first + count) that TP rank `tp_rank` keeps of `tokens` under sequence
// parallelism: slices of ceil(tokens / tp) tokens.
[[nodiscard]] RowRange sequence_slice(std::int64_t tokens, int tp, int tp_rank);

}  // namespace pleshard
