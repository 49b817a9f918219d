#pragma once
// The owner exchange: each row moves once, as stored. Every rank hashes only its own tokens
// (its sequence slice under sequence parallelism), sends each owner the distinct ids it
// needs of that owner's rows (owner-local indexes, 2, 4 or 8 bytes), the owners fetch those
// rows from their store as stored bytes (codes and scales, never decoded) and send them
// back packed, and the requester decodes them into its embeddings with the shared decode
// core. A step is the two halves in turn: the routing (engine/owner_routing.hpp: my ids
// hashed and planned, on the GPU for large steps, on the host for small ones), the owners'
// service (engine/owner_service.hpp: the counts over MPI on the host; the ids over the
// group's data communicator from a plan on the GPU, over MPI from one on the host; the rows
// over the data communicator: NCCL, MPI through host copies, or MPI on the host), then my
// decode. The sizes are known only on the host, so such steps are not captured in CUDA
// graphs. Small steps may go in fixed-size messages instead
// (ExchangeContext::owner_fixed_below): each owner gets as many entries as my largest
// possible count — my sequence slice's lookups — whether filled or not, so no count crosses
// to the host and nothing waits for the stream; where every step goes so and the GPU plans
// them, the steps are captured.

#include <vector>

#include "engine/exchange.hpp"
#include "engine/owner_routing.hpp"
#include "engine/owner_service.hpp"

namespace pleshard {

class OwnerExchange final : public Exchange {
 public:
  // Owners are the ranks of `group`, each holding its balanced part of every table: my ETP
  // group (the whole of it in the same order), or the nodes' group of peer reads (one rank
  // a node, each holding its node's part); `name`: the strategy asked for (the hierarchical
  // one with one rank per node is this).
  OwnerExchange(const ExchangeContext& context, OwnerGroup group, const char* name = "owner");
  [[nodiscard]] const char* name() const override { return name_; }
  void run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) override;
  [[nodiscard]] std::int64_t max_query_ids() const override { return service_.max_served(); }
  // Where every step goes in fixed-size messages, planned in the space.
  [[nodiscard]] bool capturable() const override;

 protected:
  [[nodiscard]] ExchangeTraffic device_counted() const override { return service_.counted_in_space(); }

 private:
  // Entries per owner of a step whose slot is `slot_tokens` tokens, in fixed-size messages:
  // the largest sequence slice's lookups, the same on every rank of the group.
  [[nodiscard]] std::int64_t slots_of(std::int64_t slot_tokens) const;
  // Whether a step of `slots` entries per owner goes in fixed-size messages: below the
  // threshold, and planned in the space where it is a GPU's (a plan on the host would wait
  // for its keys' copy).
  [[nodiscard]] bool fixed(std::int64_t slots) const;

  struct Layer {
    Workspace::Region keys;  // my ids' rows among those that come back, copied from a plan on the host
    RegionRing out;          // my embeddings, per output slot
  };

  ExchangeContext ctx_;
  const char* name_;
  std::int64_t max_ids_ = 0;    // per layer, of my tokens
  std::int64_t max_slots_ = 0;  // the most entries per owner of a step in fixed-size messages (0: none)
  std::size_t node_ranks_ = 1;  // ranks per node, for counting bytes between nodes
  OwnerService service_;
  OwnerRouting routing_;
  std::vector<Layer> layers_;
};

}  // namespace pleshard
