#pragma once
// The owner exchange: each row moves once, as stored. Every rank hashes only its own tokens
// (its sequence slice under sequence parallelism), sends each owner the distinct ids it
// needs of that owner's rows (owner-local indexes, 2, 4 or 8 bytes), the owners fetch those
// rows from their store as stored bytes (codes and scales, never decoded) and send them
// back packed, and the requester decodes them into its embeddings with the shared decode
// core. Per step: my ids hashed and planned (exec/step_row_plans.hpp) — on the GPU for large
// steps, where only each owner's count comes down to the host and the ids go over the
// group's data communicator; on the host from the batch for small ones, where that wait
// for the stream costs more than the work, and the ids go over MPI there. The counts are
// exchanged over MPI on the host, the rows over the group's communicators (NCCL, MPI
// through host copies, or MPI on the host). The sizes are known only on the host, so such
// steps are not captured in CUDA graphs.
//
// Two levels where the ETP group spans several nodes (the hierarchical form): a rank's ids
// for the owners of local index l on every node go first to its node's rank l (its gateway
// for them), which merges the node's requests, deduplicating them again, and sends each
// owner one list; the rows come back the same way, each crossing the network once per node
// rather than once per rank. That form plans on the host (engine/owner_requests.hpp), where
// its gateways merge; with one rank per node it is the flat form.

#include <memory>
#include <vector>

#include "engine/exchange.hpp"
#include "engine/owner_requests.hpp"
#include "exec/step_row_plans.hpp"

namespace pleshard {

class OwnerExchange final : public Exchange {
 public:
  // `hierarchical`: two levels over the context's node and cross communicators; the ETP
  // group must then be node-major blocks of equal size (InputError otherwise).
  OwnerExchange(const ExchangeContext& context, bool hierarchical);
  [[nodiscard]] const char* name() const override { return hierarchical_ ? "hierarchical" : "owner"; }
  void run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) override;
  [[nodiscard]] std::int64_t max_query_ids() const override { return max_served_; }
  [[nodiscard]] bool capturable() const override { return false; }

 private:
  // One level's group: a data communicator on the space's memory and an MPI one on the
  // host, both null for a group of one rank.
  struct Level {
    Communicator* data = nullptr;
    Communicator* host = nullptr;
    int size = 1;
    int rank = 0;
  };
  struct Layer {
    std::vector<std::int64_t> bounds;                         // E + 1 row boundaries of the owners' ranges
    int id_bytes = 8;                                         // of an owner-local index
    std::size_t pitch = 0;                                    // bytes of a packed row
    OwnerRequests requests;                                   // mine (two levels)
    std::vector<std::int64_t> to_gateway, from_sources;       // level 1: [gateway or source][node] ids
    std::vector<std::int64_t> gateway_totals, source_totals;  // level 1: summed over nodes
    std::vector<std::uint8_t> gathered;                       // level 1: ids received, by source then node
    std::vector<OwnerRequests> merged;                        // per node: the gathered ids merged
    std::vector<std::int64_t> to_owner, from_gateways;        // level 2: [node] ids
    std::vector<std::uint8_t> sent_ids, served_ids;           // level 2: ids sent, by node; received
    std::vector<std::int64_t> keys;                           // my ids' rows in the received block
    Workspace::Region ids_out, ids_in;  // flat: my distinct ids as sent, the ids asked of me as received
    Workspace::Region query, served_rows, gateway_rows, expanded, expanded_rows, received_rows, keys_region;
    RegionRing out;  // my embeddings, per output slot
  };

  // Whether the flat form's steps of `ids_per_layer` ids are hashed and planned in the space
  // (a GPU's) rather than on the host (ExchangeContext::owner_gpu_plan_from).
  [[nodiscard]] bool plans_in_space(std::int64_t ids_per_layer) const;
  void run_flat(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views);
  void run_two_levels(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views);

  // The ids I send peer `peer` of the cross level and the rows it sends me back, counted in
  // `step` (and as between nodes).
  void count_cross_traffic(const Layer& l, std::size_t peer, bool between_nodes, ExchangeTraffic& step) const;
  // The ids peers ask of me for the layer, checked against what the step was sized for.
  [[nodiscard]] std::int64_t asked_of_me(const Layer& l) const;
  // My tokens of a step of `tokens`: my sequence slice under SP, else all of them.
  [[nodiscard]] RowRange my_slice(std::int64_t tokens) const;
  // The layer's ids of my slice, as StepPlan::hash_mine_on_host left them in host_ids_.
  [[nodiscard]] std::span<const std::int64_t> my_host_ids(std::size_t layer, RowRange slice) const;
  // The layer's ids to their owners over MPI on the host (l.sent_ids, by l.to_owner) and the
  // ids asked of me from there (l.from_gateways of them), widened and copied into the space:
  // my store's query.
  RowQuery receive_ids_on_host(Layer& l, std::size_t layer, int upload);
  // My store's rows of `queries`, packed as stored and sent back over the cross level (to
  // l.gateway_rows); the store's tasks, for packing again at a gateway.
  std::span<const kernels::DecodeTask> serve(std::span<const RowQuery> queries, StepMarks& marks);
  // `counts[r]` entries of `bytes` each to and from rank r of `comm`, packed in rank order,
  // in the space's memory (`in_space`) or the host's; a copy where the group is one rank.
  void all_to_all(Communicator* comm, bool in_space, const std::uint8_t* send,
                  const std::vector<std::int64_t>& send_counts, std::uint8_t* recv,
                  const std::vector<std::int64_t>& recv_counts, std::size_t bytes);

  ExchangeContext ctx_;
  bool hierarchical_;
  Level node_;                   // my ETP group's ranks on my node (one rank in the flat form)
  Level cross_;                  // its ranks of my local index, one per node (the whole group in the flat form)
  int me_ = 0;                   // my ETP rank = node * node_.size + local index
  std::size_t node_ranks_ = 1;   // ranks per node, for counting bytes between nodes in the flat form
  std::int64_t max_ids_ = 0;     // per layer, of my tokens
  std::int64_t max_served_ = 0;  // per layer, that gateways can ask of me
  std::vector<Layer> layers_;
  std::unique_ptr<StepRowPlans> row_plans_;  // the flat form's, in the space
  // Two levels: [layers][max slot tokens x heads]: my block's ids, hashed on the host
  std::unique_ptr<HostBuffer> host_ids_;
  // Copied into the space by the step, which nothing waits for before the next one starts:
  // two of each, alternating (the engine keeps at most two steps in flight).
  std::unique_ptr<HostBuffer> host_query_[2];   // [layers][max_served]: the ids asked of me
  std::unique_ptr<HostBuffer> host_expand_[2];  // [layers][node size x max_ids]: gateway row of each source's id
  int next_upload_ = 0;
};

}  // namespace pleshard
