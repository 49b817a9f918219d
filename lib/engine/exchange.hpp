#pragma once
// The exchange of one PLE layer: from my DP rank's ids to my embeddings. A strategy behind
// one interface, so that others can be measured against vLLM's.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dist/communicator.hpp"
#include "dist/topology.hpp"
#include "store/host_table.hpp"

namespace pleshard {

struct PhaseTimes {
  double hash = 0;
  double exchange = 0;
  double lookup = 0;
  double write = 0;
};

// My embeddings after the exchange: tokens [first, first + count) of my DP rank's step,
// each ple_embed_dim values of the output dtype.
struct ExchangeResult {
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::vector<std::uint8_t> embeddings;
};

class Exchange {
 public:
  virtual ~Exchange() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  // ids: my DP rank's [tokens x heads]. Collective over my ETP group.
  virtual void forward(std::span<const std::int64_t> ids, int heads, const HostTable& table,
                       OutDtype dtype, ExchangeResult& out, PhaseTimes& times) = 0;
};

// vLLM's data flow: gather the ETP group's DP id blocks into slots of the largest
// token count (padding ids are row 0, their results dropped), look up the ids I own (zeros
// elsewhere), combine over ETP, keep my DP slot — or, with sequence parallelism (E = TP),
// reduce-scatter so each TP rank keeps 1/TP of the tokens.
// Partial results are combined as raw bits with bitwise OR: each element has exactly one
// owner and every other rank contributes zero bits, so the result is the owner's value bit
// for bit (a float sum would turn the owner's -0.0 into +0.0).
class GatherReduceExchange final : public Exchange {
 public:
  GatherReduceExchange(Communicator& etp, Communicator& etp_dp, Communicator& tp, const Topology& topology);
  [[nodiscard]] std::string name() const override { return "gather-reduce"; }
  void forward(std::span<const std::int64_t> ids, int heads, const HostTable& table, OutDtype dtype,
               ExchangeResult& out, PhaseTimes& times) override;

 private:
  Communicator& etp_;
  Communicator& etp_dp_;
  Communicator& tp_;
  Topology topology_;
  std::vector<std::int64_t> slot_ids_;
  std::vector<std::int64_t> gathered_ids_;
  std::vector<std::uint8_t> partial_;
};

// Tokens [first, first + count) that TP rank `tp_rank` keeps of `tokens` under sequence
// parallelism: slices of ceil(tokens / tp) tokens.
[[nodiscard]] RowRange sequence_slice(std::int64_t tokens, int tp, int tp_rank);

}  // namespace pleshard
