#include "engine/step_plan.hpp"

#include "core/error.hpp"
#include "exec/step_kernels.hpp"

namespace pleshard {

namespace {

std::size_t block_entries(const PlanShape& shape, std::int64_t slot_tokens) {
  return static_cast<std::size_t>(kernels::SlotBatchView::block_size(slot_tokens, shape.context_width));
}

}  // namespace

StepPlan::StepPlan(StepSpace& space, Workspace& workspace, const PlanShape& shape)
    : space_(space),
      workspace_(workspace),
      shape_(shape),
      params_(workspace.add<kernels::NgramHashParams>(static_cast<std::size_t>(shape.layers))),
      token_map_(workspace.add<std::int64_t>(static_cast<std::size_t>(shape.token_map_entries))),
      my_block_(workspace.add<std::int64_t>(block_entries(shape, shape.max_slot_tokens))),
      group_blocks_(workspace.add<std::int64_t>(static_cast<std::size_t>(shape.slots) *
                                                block_entries(shape, shape.max_slot_tokens))),
      ids_(workspace.add<std::int64_t>(static_cast<std::size_t>(shape.layers) * static_cast<std::size_t>(shape.slots) *
                                       static_cast<std::size_t>(shape.max_slot_tokens) *
                                       static_cast<std::size_t>(shape.heads))),
      packed_{HostBuffer(space, block_entries(shape, shape.max_slot_tokens) * sizeof(std::int64_t)),
              HostBuffer(space, block_entries(shape, shape.max_slot_tokens) * sizeof(std::int64_t))} {}

void StepPlan::upload(std::span<const kernels::NgramHashParams> params) {
  if (params.size() != static_cast<std::size_t>(shape_.layers)) throw SystemError("StepPlan: one hash spec per layer");
  host_params_.assign(params.begin(), params.end());
  std::vector<kernels::NgramHashParams> in_space = host_params_;
  const std::int64_t* map = nullptr;
  for (kernels::NgramHashParams& p : in_space) {
    if (p.token_map == nullptr) continue;
    if (map != nullptr && p.token_map != map) throw SystemError("StepPlan: the tables hash through one token map");
    map = p.token_map;
    p.token_map = workspace_.at<std::int64_t>(token_map_);
  }
  if (map != nullptr) {
    if (shape_.token_map_entries == 0) throw SystemError("StepPlan: no room for the token map");
    space_.copy_from_host(workspace_.at<std::int64_t>(token_map_), map,
                          static_cast<std::size_t>(shape_.token_map_entries) * sizeof(std::int64_t));
  }
  space_.copy_from_host(workspace_.at<kernels::NgramHashParams>(params_), in_space.data(),
                        in_space.size() * sizeof(kernels::NgramHashParams));
  space_.synchronize();  // from pageable memory that goes away
}

std::size_t StepPlan::block_bytes() const { return block_entries(shape_, slot_tokens_) * sizeof(std::int64_t); }

std::int64_t* StepPlan::my_block() const { return workspace_.at<std::int64_t>(my_block_); }

std::int64_t* StepPlan::my_block_in_space() {
  // A CUDA graph of a step that handed the block out is bound to its buffer by that alone
  // (StepGraphs): a pull of the plan's own as well would make that ambiguous.
  if (handed_out_)
    throw SystemError("StepPlan: my block asked for in the space after it was handed out in pinned memory");
  if (!in_space_) space_.copy_from_pinned(my_block(), packed(), packed_layout_);
  in_space_ = true;
  return my_block();
}

kernels::PinnedBlock StepPlan::my_block_in_pinned() {
  if (in_space_) return {};
  handed_out_ = true;
  return {static_cast<const std::int64_t*>(packed()), packed_layout_};
}
std::int64_t* StepPlan::group_blocks() const { return workspace_.at<std::int64_t>(group_blocks_); }

void StepPlan::pack(const TokenBatch& batch, std::int64_t slot_tokens, std::uint64_t step) {
  if (slot_tokens < 1 || slot_tokens > shape_.max_slot_tokens)
    throw InputError("a step of " + std::to_string(slot_tokens) + " tokens per DP rank exceeds the engine's " +
                     std::to_string(shape_.max_slot_tokens));
  slot_tokens_ = slot_tokens;
  packed_index_ = static_cast<int>(step % 2);
  HostBuffer& host = packed_[packed_index_];
  packed_layout_ = pack_slot(batch, slot_tokens, {host.as<std::int64_t>(), block_entries(shape_, slot_tokens)});
  in_space_ = false;
  handed_out_ = false;
}

const void* StepPlan::packed() const { return packed_[packed_index_].data(); }

void StepPlan::hash(const std::int64_t* blocks, int slots, const kernels::IdTally& tally) {
  if (blocks == my_block() && !in_space_) throw SystemError("StepPlan: my block hashed before its copy into the space");
  const kernels::StepHash h = hashing(blocks, slots, tally);
  hash_step(space_, h.params, h.layers, h.heads, h.batch, h.ids, h.tally);
}

kernels::StepHash StepPlan::hashing(const std::int64_t* blocks, int slots, const kernels::IdTally& tally) {
  const kernels::SlotBatchView view{blocks, slots, slot_tokens_, shape_.context_width};
  hashed_tokens_ = view.tokens();
  return {workspace_.at<kernels::NgramHashParams>(params_),
          shape_.layers,
          shape_.heads,
          view,
          workspace_.at<std::int64_t>(ids_),
          tally};
}

void StepPlan::hash_mine_on_host(std::int64_t* ids) const {
  hash_step_on_host(host_params_.data(), shape_.layers,
                    {static_cast<const std::int64_t*>(packed()), 1, slot_tokens_, shape_.context_width}, ids);
}

const std::int64_t* StepPlan::ids(int layer) const {
  return workspace_.at<std::int64_t>(ids_) + static_cast<std::int64_t>(layer) * ids_per_layer();
}

}  // namespace pleshard
