#pragma once
// What one step of every PLE layer works on, built in a pre-sized workspace of the step
// space: my DP rank's batch packed as one slot, the ETP group's slots (gathered by the
// exchange: tokens are H x L times smaller than the ids they hash to, so ranks exchange
// tokens and each hashes the group's itself), and the ids of every layer for those slots.
// The exchange decides which slots a rank hashes; the plan holds them.

#include <cstdint>
#include <span>
#include <vector>

#include "exec/step_space.hpp"
#include "exec/workspace.hpp"
#include "hash/token_batch.hpp"
#include "kernels/common/id_tally.hpp"

namespace pleshard {

struct PlanShape {
  int layers = 1;
  int heads = 1;                       // H, the same for every layer
  int context_width = 0;               // N - 1
  int slots = 1;                       // DP ranks whose tokens this rank hashes
  std::int64_t max_slot_tokens = 1;    // the most tokens of one DP rank in a step
  std::int64_t token_map_entries = 0;  // the tables' token map (one for every table), or 0
};

class StepPlan {
 public:
  // Adds the plan's regions to `workspace`; usable once the workspace is allocated and
  // upload() has copied the layers' hash parameters in.
  StepPlan(StepSpace& space, Workspace& workspace, const PlanShape& shape);
  StepPlan(const StepPlan&) = delete;
  StepPlan& operator=(const StepPlan&) = delete;

  // The layers' hash parameters as make_hash_params gives them (token maps in host memory,
  // kept alive by the caller); a token map is copied into the space, and the space's copy
  // of the parameters points there.
  void upload(std::span<const kernels::NgramHashParams> params);

  [[nodiscard]] const PlanShape& shape() const { return shape_; }
  [[nodiscard]] std::int64_t slot_tokens() const { return slot_tokens_; }
  [[nodiscard]] std::size_t block_bytes() const;  // one slot's packed batch at slot_tokens()

  // Packs my DP rank's batch as a slot of `slot_tokens` tokens into the pinned buffer of
  // `step` (the buffers alternate by step, so the step before the last must have read its
  // block: the engine keeps at most two steps in flight). Nothing is enqueued: the step's
  // work reads the block where it needs it (my_block_in_space, my_block_in_pinned).
  void pack(const TokenBatch& batch, std::int64_t slot_tokens, std::uint64_t step);
  // The buffer pack() filled, and its runs of data and padding: a CUDA graph that pulls the
  // block is pointed there at each launch (one that reads it in place is bound to its buffer).
  [[nodiscard]] const void* packed() const;
  [[nodiscard]] const kernels::PaddedBlock& packed_layout() const { return packed_layout_; }
  // My block in the space, its copy from packed() enqueued by the step's first call (on the
  // GPU its own loads: StepSpace::copy_from_pinned); SystemError once the step has handed
  // the block out in pinned memory (my_block_in_pinned).
  [[nodiscard]] std::int64_t* my_block_in_space();
  // Where my block goes in the space, without its copy.
  [[nodiscard]] std::int64_t* my_block() const;
  // My block where it is still only in packed() — the step has not copied it in — for the
  // launch that reads it to carry, read or copy it itself (hash_and_decode_step: a launch
  // fewer); empty once it is in the space.
  [[nodiscard]] kernels::PinnedBlock my_block_in_pinned();
  // Whether the step handed my block out in packed() (my_block_in_pinned): a CUDA graph that
  // captured the step and no pull of it (the launch's own, the plan then pulls none) reads
  // that buffer itself.
  [[nodiscard]] bool handed_out_in_pinned() const { return handed_out_; }
  // Room for every slot's block, in slot order (the group's all-gather lands here).
  [[nodiscard]] std::int64_t* group_blocks() const;

  // Hashes `slots` blocks at `blocks` (my_block_in_space() for one, group_blocks() for the
  // group): every layer's ids for slots x slot_tokens() tokens, counted into `tally` where it
  // is given (in the space's memory). SystemError for my block before its copy has been
  // enqueued (it would hash an earlier step's batch).
  void hash(const std::int64_t* blocks, int slots, const kernels::IdTally& tally = {});
  // The same hashing, left to the kernel that consumes the ids (hash_and_decode_step):
  // ids() and ids_per_layer() are as after hash(), the ids themselves not written yet.
  [[nodiscard]] kernels::StepHash hashing(const std::int64_t* blocks, int slots, const kernels::IdTally& tally = {});
  [[nodiscard]] const std::int64_t* ids(int layer) const;
  [[nodiscard]] std::int64_t ids_per_layer() const { return hashed_tokens_ * shape_.heads; }

  // My block's ids of every layer hashed on the host from the host copy pack() packed, into
  // host memory laid out as hash()'s: for an exchange that plans on the host, which then
  // need not wait for ids hashed in the space (one stream round trip per step saved; the
  // host hashes a prefill step of 8192 tokens x 16 heads in well under a millisecond).
  void hash_mine_on_host(std::int64_t* ids) const;

 private:
  StepSpace& space_;
  Workspace& workspace_;
  PlanShape shape_;
  Workspace::Region params_;
  Workspace::Region token_map_;
  Workspace::Region my_block_;
  Workspace::Region group_blocks_;
  Workspace::Region ids_;
  std::vector<kernels::NgramHashParams> host_params_;
  HostBuffer packed_[2];
  int packed_index_ = 0;     // the buffer the last pack() filled
  bool in_space_ = false;    // whether the step has enqueued its block's copy into the space
  bool handed_out_ = false;  // whether the step handed my block out in packed()
  kernels::PaddedBlock packed_layout_;
  std::int64_t slot_tokens_ = 0;
  std::int64_t hashed_tokens_ = 0;
};

}  // namespace pleshard
