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
// Where the store fetches ahead (the pinned tier's host gathers, the disk tier's reads), a
// step also runs in two halves (Exchange::begins_ahead): the next step's routing, counts,
// ids and fetch begin once this step's rows are served and back, so that its fetch runs
// beside this step's decode; at every slot size, on every rank of the group alike, as their
// collectives must.

#include <functional>
#include <vector>

#include "engine/begun_steps.hpp"
#include "engine/exchange.hpp"
#include "engine/owner_routing.hpp"
#include "engine/owner_service.hpp"

namespace pleshard {

class OwnerExchange final : public HalvedExchange {
 public:
  // Owners are the ranks of `group`, each holding its balanced part of every table: my ETP
  // group (the whole of it in the same order), or the nodes' group of peer reads (one rank
  // a node, each holding its node's part); `name`: the strategy asked for (the hierarchical
  // one with one rank per node is this).
  OwnerExchange(const ExchangeContext& context, OwnerGroup group, const char* name = "owner");
  [[nodiscard]] const char* name() const override { return name_; }
  [[nodiscard]] std::int64_t max_query_ids() const override { return service_.max_served(); }
  // Where every step goes in fixed-size messages, planned in the space.
  [[nodiscard]] bool capturable() const override;
  // Where the store fetches ahead. The next step begins after this one's rows have come
  // back and its keys are copied out of the routing's plan, so its decode reads nothing the
  // next begin() rewrites, whatever the store reads in place: so at every slot size.
  [[nodiscard]] bool begins_ahead() const override { return ctx_.store.fetches_ahead(); }
  [[nodiscard]] bool begins_beside_decode(std::int64_t /*slot_tokens*/) const override { return begins_ahead(); }
  void abandon() override { begun_.clear(); }

 protected:
  [[nodiscard]] ExchangeTraffic device_counted() const override { return service_.counted_in_space(); }
  // The step routed, its counts and ids exchanged, and my store's fetch of the rows asked of
  // me submitted.
  void submit(std::int64_t tokens, StepMarks& marks) override;
  // The rest of the oldest step submitted: its rows served and back, `fetched` called where
  // given (the next step begun), then my decode.
  void complete(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
                const std::function<void()>& fetched) override;

 private:
  // Entries per owner of a step whose slot is `slot_tokens` tokens, in fixed-size messages:
  // the largest sequence slice's lookups, the same on every rank of the group.
  [[nodiscard]] std::int64_t slots_of(std::int64_t slot_tokens) const;
  // Whether a step of `slots` entries per owner goes in fixed-size messages: below the
  // threshold, and planned in the space where it is a GPU's (a plan on the host would wait
  // for its keys' copy).
  [[nodiscard]] bool fixed(std::int64_t slots) const;

  struct Layer {
    // My ids' rows among those that come back, where the decode cannot read them in the
    // routing's plan: copied from a plan on the host, written for fixed-size messages, or
    // kept from the next step's plan.
    Workspace::Region keys;
    RegionRing out;  // my embeddings, per output slot
  };
  // What a step submitted leaves its completion, once the next step's begin() may have packed
  // the plan and routed anew.
  struct Begun {
    RowRange slice;            // my embeddings handed out
    std::int64_t lookups = 0;  // a layer's, planned
    std::int64_t slots = 0;    // entries per owner, in fixed-size messages
    bool fixed = false;        // the step goes in fixed-size messages
    bool planned_in_space = false;
    ExchangeTraffic step;
  };

  ExchangeContext ctx_;
  const char* name_;
  std::int64_t max_ids_ = 0;    // per layer, of my tokens
  std::int64_t max_slots_ = 0;  // the most entries per owner of a step in fixed-size messages (0: none)
  std::size_t node_ranks_ = 1;  // ranks per node, for counting bytes between nodes
  OwnerService service_;
  OwnerRouting routing_;
  std::vector<Layer> layers_;
  BegunSteps<Begun> begun_;
};

}  // namespace pleshard
