#pragma once
// The requester's half of the owner exchanges (engine/owner_exchange.hpp, the flat form;
// engine/hierarchical_exchange.hpp, two levels): which rows a step asks of which owner. My
// tokens' ids of every layer (my sequence slice under sequence parallelism) are hashed and
// planned against the owners' ranges (exec/step_row_plans.hpp): the distinct ids in
// ascending order, so grouped by owner, and every lookup's key among them, which is its row
// among the rows that come back owner by owner. Large steps are hashed and planned in the
// space (a GPU's), where only each owner's count comes down to the host; small ones on the
// host from the batch the plan packed, where the host's work costs less than a wait for the
// stream. The owners' half (engine/owner_service.hpp) takes it from the counts on. A step in
// fixed-size messages (ExchangeContext::owner_fixed_below) gives every owner the same number
// of entries, known before the plan, so nothing waits for the space and a CUDA graph may
// capture it: it is planned in the space wherever a GPU can plan it.

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/exchange.hpp"
#include "engine/owner_service.hpp"
#include "exec/step_row_plans.hpp"

namespace pleshard {

class OwnerRouting {
 public:
  // Routes to the owners `service` holds the ranges of, at most `max_ids` lookups a layer.
  // `plans_in_space`: steps of at least ExchangeContext::owner_gpu_plan_from lookups a layer
  // are planned in the space where it is a GPU's (and the tables are narrow enough to key
  // there); otherwise every step is planned on the host.
  // `slots_per_owner`: the most entries per owner of a step in fixed-size messages (0: none).
  OwnerRouting(const ExchangeContext& context, const OwnerService& service, std::int64_t max_ids, bool plans_in_space,
               std::int64_t slots_per_owner = 0);

  // Whether steps are planned on the GPU where asked (the space is a GPU's and can plan them).
  [[nodiscard]] bool plans_on_gpu() const { return plans_->plans_on_gpu(); }
  // Hashes and plans my tokens of a step of `tokens` (loaded in the plan), every layer, and
  // marks the hash phase. `fixed`: a step in fixed-size messages, planned in the space
  // wherever a GPU can.
  void plan(std::int64_t tokens, StepMarks& marks, bool fixed = false);
  // Of the last plan: my tokens, the lookups of each layer (my tokens x heads), and whether
  // it was made in the space (a GPU's) rather than on the host.
  [[nodiscard]] RowRange slice() const { return slice_; }
  [[nodiscard]] std::int64_t lookups() const { return slice_.size() * ctx_.plan.shape().heads; }
  [[nodiscard]] bool in_space() const { return in_space_; }

  // How many distinct ids of each layer I ask each owner for, [layer][owner]: waits for the
  // space where the plan was made there.
  [[nodiscard]] const std::vector<std::vector<std::int64_t>>& owner_counts();
  // The layer's distinct ids as sent, owner by owner, owner-local indexes of the service's
  // id_bytes(layer) each, written where the plan was made (in the space or on the host);
  // after owner_counts().
  [[nodiscard]] const std::uint8_t* local_ids(int layer);
  // Per lookup of the layer, its distinct id's position (-1 outside every owner's range),
  // where the plan was made.
  [[nodiscard]] const std::int64_t* keys(int layer) const { return plans_->keys(layer); }

  // A step in fixed-size messages of `slots` entries per owner (kernels/common/row_plan.hpp:
  // slot_of), without owner_counts(): the layer's ids as sent, where the plan was made; and
  // per lookup, its row's entry among the rows that come back into `keys` (the space's; a
  // GPU's step so planned there).
  [[nodiscard]] const std::uint8_t* local_ids_in_slots(int layer, std::int64_t slots);
  void keys_in_slots(int layer, std::int64_t slots, std::int64_t* keys);

 private:
  struct Layer {
    int id_bytes = 8;
    Workspace::Region ids_in_space;     // the distinct ids as sent, from a plan in the space
    std::vector<std::uint8_t> on_host;  // from a plan on the host
  };

  ExchangeContext ctx_;
  std::size_t owners_ = 1;  // E, the ETP ranks
  std::int64_t slots_per_owner_ = 0;
  std::vector<Layer> layers_;
  std::unique_ptr<StepRowPlans> plans_;
  std::unique_ptr<HostBuffer> host_ids_;  // [layers][max slot tokens x heads]: my block's ids, hashed on the host
  RowRange slice_;
  bool in_space_ = false;
  const std::vector<std::vector<std::int64_t>>* counts_ = nullptr;  // the last plan's, once owner_counts() has them
};

}  // namespace pleshard
