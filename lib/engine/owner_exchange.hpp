#pragma once
// The owner exchange: each row moves once, as stored. Every rank hashes only its own tokens
// (its sequence slice under sequence parallelism), sends each owner the distinct ids it
// needs of that owner's rows (owner-local indexes, 2, 4 or 8 bytes), the owners fetch those
// rows from their store as stored bytes (codes and scales, never decoded) and send them
// back packed (engine/owner_service.hpp), and the requester decodes them into its
// embeddings with the shared decode core. Per step: my ids hashed and planned
// (exec/step_row_plans.hpp) — on the GPU for large steps, where only each owner's count
// comes down to the host and the ids go over the group's data communicator; on the host
// from the batch for small ones, where that wait for the stream costs more than the work,
// and the ids go over MPI there. The counts are exchanged over MPI on the host, the rows
// over the group's communicators (NCCL, MPI through host copies, or MPI on the host). The
// sizes are known only on the host, so such steps are not captured in CUDA graphs.

#include <memory>
#include <vector>

#include "engine/exchange.hpp"
#include "engine/owner_service.hpp"
#include "exec/step_row_plans.hpp"

namespace pleshard {

class OwnerExchange final : public Exchange {
 public:
  // Owners are the ranks of `group` (my ETP group: the whole of it in the same order);
  // `name`: the strategy asked for (the hierarchical one with one rank per node is this).
  OwnerExchange(const ExchangeContext& context, OwnerGroup group, const char* name = "owner");
  [[nodiscard]] const char* name() const override { return name_; }
  void run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) override;
  [[nodiscard]] std::int64_t max_query_ids() const override { return service_.max_served(); }
  [[nodiscard]] bool capturable() const override { return false; }

 private:
  struct Layer {
    Workspace::Region ids_out;  // my distinct ids as sent, planned in the space
    Workspace::Region keys;     // my ids' rows among those that come back, copied from a plan on the host
    RegionRing out;             // my embeddings, per output slot
  };
  // Whether steps of `ids_per_layer` ids are hashed and planned in the space (a GPU's) rather
  // than on the host (ExchangeContext::owner_gpu_plan_from).
  [[nodiscard]] bool plans_in_space(std::int64_t ids_per_layer) const;

  ExchangeContext ctx_;
  const char* name_;
  std::int64_t max_ids_ = 0;    // per layer, of my tokens
  std::size_t node_ranks_ = 1;  // ranks per node, for counting bytes between nodes
  OwnerService service_;
  std::vector<Layer> layers_;
  std::unique_ptr<StepRowPlans> row_plans_;
  std::unique_ptr<HostBuffer> host_ids_;  // [layers][max slot tokens x heads]: my block's ids, hashed on the host
};

}  // namespace pleshard
