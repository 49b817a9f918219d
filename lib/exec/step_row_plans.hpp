#pragma once
// A step's row plans (kernels/common/row_plan.hpp), one per layer, made where the caller's ids
// are: in the step space (on the GPU by DeviceRowPlan, on the stream, where there is one) or
// on the host (plan_rows). A plan's keys and distinct ids stay where it was made; only each
// owner's count has to reach the host, which sizes the messages by them — for a plan on the
// GPU, one wait for the stream a step — and, for a store that reads its rows on the host
// (the disk tier), the distinct ids.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "exec/step_space.hpp"
#include "kernels/host/row_plan_host.hpp"

namespace pleshard {

class StepRowPlans {
 public:
  // Per layer, its owners' bounds (E + 1 ascending, the same E for every layer); up to
  // `max_ids` lookups a layer (0: plans on the host only).
  StepRowPlans(StepSpace& space, const std::vector<std::vector<std::int64_t>>& bounds, std::int64_t max_ids);
  ~StepRowPlans();
  StepRowPlans(const StepRowPlans&) = delete;
  StepRowPlans& operator=(const StepRowPlans&) = delete;

  // Whether plan_in_space plans on the GPU: the space is a GPU's and every layer's bounds
  // span fewer than 2^32 - 1 rows.
  [[nodiscard]] bool plans_on_gpu() const;
  // Before plans of `bounds` for `max_ids` lookups are made: whether they would plan on the
  // GPU, and the space's memory they would take (none where they plan on the host).
  [[nodiscard]] static bool would_plan_on_gpu(const StepSpace& space,
                                              const std::vector<std::vector<std::int64_t>>& bounds,
                                              std::int64_t max_ids);
  [[nodiscard]] static std::uint64_t space_bytes(const StepSpace& space,
                                                 const std::vector<std::vector<std::int64_t>>& bounds,
                                                 std::int64_t max_ids);
  // Plans the layer's lookups ids[0, n) in the space (ids there), on the space's stream: on
  // the GPU where plans_on_gpu(), else on the host space. `counts`: the owners' starts copied
  // down for owner_counts() and distinct_on_host(); a plan written in fixed-size messages
  // needs none.
  void plan_in_space(int layer, const std::int64_t* ids, std::int64_t n, bool counts = true);
  // Plans the layer's lookups on the host (ids there).
  void plan_on_host(int layer, std::span<const std::int64_t> ids);
  // Whether the last plans were made on the host (always so on the host space).
  [[nodiscard]] bool on_host() const { return on_host_; }

  // How many of each layer's distinct ids each owner holds, [layer][owner], for the plans
  // made since the last call: waits for the space where they were made on the GPU.
  [[nodiscard]] const std::vector<std::vector<std::int64_t>>& owner_counts();
  // Per lookup of the layer, its position among the distinct ids (-1 outside the bounds),
  // where the plan was made.
  [[nodiscard]] const std::int64_t* keys(int layer) const;
  // The layer's distinct ids, owner by owner, as owner-local indexes of `width` bytes into
  // `out`, where the plan was made; after owner_counts().
  void write_local_ids(int layer, int width, std::uint8_t* out);
  // The same in fixed-size messages (kernels/common/row_plan.hpp: slot_of): `slots` entries
  // of `width` bytes per owner into `out`, and per lookup its entry there into `keys`, both
  // where the plan was made; owner_counts() not needed, nothing waits for the space. Every
  // owner's distinct ids of the layer fit in `slots`.
  void write_local_ids_in_slots(int layer, int width, std::int64_t slots, std::uint8_t* out);
  void keys_in_slots(int layer, std::int64_t slots, std::int64_t* keys);
  // Every layer's distinct ids, ascending, into out[layer] on the host: what a store reads
  // (the disk tier), owner_counts() not needed. Plans made on the GPU copy down 32-bit
  // offsets, all layers' behind one wait for the space.
  void distinct_on_host(std::vector<std::vector<std::int64_t>>& out);

 private:
  StepSpace& space_;
  bool on_host_ = true;
  std::vector<std::vector<std::int64_t>> bounds_;
  std::vector<kernels::HostRowPlan> host_;
  struct DevicePlans;                    // a GPU build's: a DeviceRowPlan per layer
  std::unique_ptr<DevicePlans> device_;  // where the space is a GPU's
  std::unique_ptr<HostBuffer> starts_;   // the GPU plans' owners' starts, copied down
  std::vector<std::vector<std::int64_t>> counts_;
  std::vector<std::int64_t> lookups_;  // per layer, the lookups of its last plan on the GPU
  std::int64_t max_ids_ = 0;
  std::unique_ptr<HostBuffer> offsets_;  // the GPU plans' distinct offsets, copied down (made on first use)
};

}  // namespace pleshard
