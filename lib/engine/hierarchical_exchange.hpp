#pragma once
// The owner exchange in two levels, for ETP groups over several nodes (node-major blocks of
// one size): a rank's ids for the owners of local index g on every node go first to its
// node's rank g (its gateway for them), which merges the node's requests, deduplicating
// them again, and asks each owner once (engine/owner_service.hpp, over the ranks of one
// local index, one per node); the rows come back the same way, the gateway picks each
// source's rows out of the merged ones and sends them on within the node. A row crosses the
// network once per node rather than once per rank. The gateways merge on the host, so this
// form routes my ids on the host (engine/owner_routing.hpp) and merges there
// (engine/owner_requests.hpp); with one rank per node it is the flat form
// (engine/owner_exchange.hpp), which make_exchange builds instead. Where the store fetches
// ahead, a step runs in two halves as the flat form's do: the next step begins once this
// one's rows are back and its keys are in the space.

#include <functional>
#include <memory>
#include <vector>

#include "engine/begun_steps.hpp"
#include "engine/exchange.hpp"
#include "engine/owner_requests.hpp"
#include "engine/owner_routing.hpp"
#include "engine/owner_service.hpp"

namespace pleshard {

class HierarchicalExchange final : public HalvedExchange {
 public:
  // Over the context's node and cross communicators: the ETP group in node-major blocks of
  // one size (the engine checks the layout) of several ranks each (make_exchange builds the
  // flat form for one rank a node); SystemError otherwise.
  explicit HierarchicalExchange(const ExchangeContext& context);
  [[nodiscard]] const char* name() const override { return "hierarchical"; }
  [[nodiscard]] std::int64_t max_query_ids() const override { return service_.max_served(); }
  [[nodiscard]] bool capturable() const override { return false; }
  // Where the store fetches ahead; at every slot size, every rank alike (OwnerExchange's).
  [[nodiscard]] bool begins_ahead() const override { return ctx_.store.fetches_ahead(); }
  [[nodiscard]] bool begins_beside_decode(std::int64_t /*slot_tokens*/) const override { return begins_ahead(); }
  void abandon() override { begun_.clear(); }

 protected:
  // The step routed to its gateways, merged, the merged ids sent to their owners, and my
  // store's fetch of the rows asked of me submitted.
  void submit(std::int64_t tokens, StepMarks& marks) override;
  // The rest of the oldest step submitted: its rows served, back through the gateways and
  // keyed, `fetched` called where given (the next step begun), then my decode.
  void complete(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
                const std::function<void()>& fetched) override;

 private:
  // What a step submitted leaves its completion.
  struct Begun {
    RowRange slice;            // my embeddings handed out
    std::int64_t lookups = 0;  // a layer's
    int upload = 0;            // its turn of host_expand_
    ExchangeTraffic step;
  };

  struct Layer {
    std::vector<std::int64_t> to_gateway, from_sources;       // level 1: [gateway or source][node] ids
    std::vector<std::int64_t> gateway_totals, source_totals;  // level 1: summed over nodes
    std::vector<std::uint8_t> gathered;                       // level 1: ids received, by source then node
    std::vector<OwnerRequests> merged;                        // per node: the gathered ids merged
    std::vector<std::uint8_t> sent_ids;                       // level 2: the merged ids, by node
    std::vector<std::int64_t> keys;                           // my ids' rows in the received block
    Workspace::Region expanded, expanded_rows, received_rows, keys_region;
    RegionRing out;  // my embeddings, per output slot
  };

  // Level 1: my ids to their gateways, merged there per owner node; level 2's counts sent.
  void route_to_gateways(ExchangeTraffic& step);
  // At the gateway: each source's rows picked out of the merged ones the owners sent back,
  // and sent on to the sources.
  void return_to_sources(std::span<const kernels::DecodeTask> fetched, int upload, ExchangeTraffic& step);

  ExchangeContext ctx_;
  OwnerGroup node_;           // my ETP group's ranks on my node
  std::int64_t max_ids_ = 0;  // per layer, of my tokens
  OwnerService service_;      // over the ranks of my local index, one per node
  OwnerRouting routing_;      // my ids, to the owners of the whole ETP group
  std::vector<Layer> layers_;
  // Copied into the space by a step nothing waits for before the next one starts: two,
  // alternating (at most two steps in flight). [layers][node size x max_ids]: the gateway
  // row of each source's id.
  std::unique_ptr<HostBuffer> host_expand_[2];
  int next_upload_ = 0;
  BegunSteps<Begun> begun_;
};

}  // namespace pleshard
