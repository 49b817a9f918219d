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
// (engine/owner_exchange.hpp), which make_exchange builds instead.

#include <memory>
#include <vector>

#include "engine/exchange.hpp"
#include "engine/owner_requests.hpp"
#include "engine/owner_routing.hpp"
#include "engine/owner_service.hpp"

namespace pleshard {

class HierarchicalExchange final : public Exchange {
 public:
  // Over the context's node and cross communicators: the ETP group in node-major blocks of
  // one size (the engine checks the layout) of several ranks each (make_exchange builds the
  // flat form for one rank a node); SystemError otherwise.
  explicit HierarchicalExchange(const ExchangeContext& context);
  [[nodiscard]] const char* name() const override { return "hierarchical"; }
  void run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) override;
  [[nodiscard]] std::int64_t max_query_ids() const override { return service_.max_served(); }
  [[nodiscard]] bool capturable() const override { return false; }

 private:
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
};

}  // namespace pleshard
