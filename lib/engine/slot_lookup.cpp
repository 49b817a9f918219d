#include "engine/slot_lookup.hpp"

#include <vector>

#include "engine/detail/exchange_steps.hpp"
#include "engine/step_marks.hpp"

namespace pleshard {

using namespace detail;

SlotLookup::SlotLookup(const ExchangeContext& context, int pad_to, int copies) : ctx_(context), pad_to_(pad_to) {
  const PlanShape& s = ctx_.plan.shape();
  const std::int64_t padded = ceil_div(s.max_slot_tokens, pad_to_) * pad_to_;
  partial_.add(ctx_.workspace, layers_of(ctx_) * static_cast<std::size_t>(s.slots * padded) * token_bytes(ctx_),
               copies);
}

std::int64_t SlotLookup::max_query_ids() const {
  const PlanShape& s = ctx_.plan.shape();
  return static_cast<std::int64_t>(s.slots) * s.max_slot_tokens * s.heads;
}

std::int64_t SlotLookup::layer_rows() const {
  return ctx_.plan.shape().slots * (ceil_div(ctx_.plan.slot_tokens(), pad_to_) * pad_to_);
}

std::size_t SlotLookup::layer_bytes() const { return static_cast<std::size_t>(layer_rows()) * token_bytes(ctx_); }

bool SlotLookup::begins_beside_decode(std::int64_t slot_tokens) const {
  // A decode that hashes reads the plan's slots, and rows read in place are keyed by the
  // plan's ids: both rewritten by the next step's begin().
  const PlanShape& s = ctx_.plan.shape();
  const std::int64_t ids = static_cast<std::int64_t>(s.slots) * slot_tokens * s.heads;
  return !decode_hashes(ctx_, ids) && ctx_.store.fetches_ahead_at(ids);
}

std::uint8_t* SlotLookup::run(int out_slot, StepMarks& marks, ExchangeTraffic& step,
                              const std::function<void(std::span<const int>)>& decoded) {
  // A step decoded part by part hashes first: each part's decode reads its own layers' ids.
  const bool by_parts = decoded && ctx_.store.parts() > 1 && !ctx_.space.capturing();
  return finish(begin(marks, step, by_parts), out_slot, marks, {}, decoded);
}

SlotLookup::Fetch SlotLookup::begin(StepMarks& marks, ExchangeTraffic& step, bool by_parts) {
  StepPlan& plan = ctx_.plan;
  const int slots = plan.shape().slots;
  const std::size_t layers = layers_of(ctx_);

  // 1. The ETP group's batches, one slot per DP rank, then every layer's ids.
  const bool gathers_slots = ctx_.comms.etp_dp != nullptr;
  if (gathers_slots) {
    const std::size_t bytes = plan.block_bytes();
    ctx_.comms.etp_dp->all_gather(
        {reinterpret_cast<const std::uint8_t*>(plan.my_block_in_space()), bytes},
        {reinterpret_cast<std::uint8_t*>(plan.group_blocks()), bytes * static_cast<std::size_t>(slots)});
    step.bytes_sent += gather_bytes(slots, bytes * static_cast<std::size_t>(slots));
  }
  marks.mark(StepPhase::gather, gathers_slots);
  // Where the store reads the tables in place, a GPU's decode hashes its own keys: a launch
  // fewer, and the ids are never written (the hash phase is then part of the decode's). A
  // slot of my own is left in pinned memory for that decode, which carries it in its
  // parameters where it can, or in a CUDA graph reads it there (another launch saved). The
  // host saves nothing so: it hashes in a phase of its own, as every tier's report says.
  Fetch fetch;
  fetch.by_parts = by_parts;
  fetch.layer_bytes = layer_bytes();
  fetch.hashing = plan.hashing(gathers_slots ? plan.group_blocks() : plan.my_block(), slots);
  fetch.ids = plan.ids_per_layer();  // as hashing() leaves it
  fetch.slot_tokens = plan.slot_tokens();
  fetch.decode_hashes = decode_hashes(ctx_, fetch.ids) && !by_parts;
  if (!fetch.decode_hashes) plan.hash(gathers_slots ? plan.group_blocks() : plan.my_block_in_space(), slots);
  marks.mark(StepPhase::hash, !fetch.decode_hashes);

  // 2. The rows I own of every id; zeros for the rest.
  fetch.queries.resize(layers);
  for (std::size_t d = 0; d < layers; ++d) fetch.queries[d] = {plan.ids(static_cast<int>(d)), fetch.ids};
  fetch.pinned = gathers_slots ? kernels::PinnedBlock{} : plan.my_block_in_pinned();
  if (!by_parts) ctx_.store.submit(fetch.queries);
  return fetch;
}

std::uint8_t* SlotLookup::finish(const Fetch& fetch, int out_slot, StepMarks& marks,
                                 const std::function<void()>& fetched,
                                 const std::function<void(std::span<const int>)>& decoded) {
  RowStore& store = ctx_.store;
  std::uint8_t* partial = this->partial(out_slot);
  if (!fetch.by_parts) {
    const std::span<const kernels::DecodeTask> rows = wait_for_rows(ctx_, fetch.ids, marks);
    if (fetched && begins_beside_decode(fetch.slot_tokens)) fetched();
    decode_rows(ctx_, rows, partial, fetch.layer_bytes, marks, fetch.decode_hashes ? &fetch.hashing : nullptr,
                fetch.pinned);
    return partial;
  }
  // Part by part, fastest tier first: a part's tables are decoded, and told, while the next
  // part fetches (a pinned table's host gather behind a device table's reader).
  if (unmarked_ == nullptr) unmarked_ = std::make_unique<StepMarks>(ctx_.space);
  unmarked_->begin(false);
  const std::size_t layers = layers_of(ctx_);
  for (int p = 0; p < store.parts(); ++p) {
    std::vector<int> tables;
    for (std::size_t d = 0; d < layers; ++d)
      if (store.part_holds(p, static_cast<int>(d))) tables.push_back(static_cast<int>(d));
    store.submit_part(p, fetch.queries);
    decode_rows(ctx_, store.wait_part(p), partial, fetch.layer_bytes, *unmarked_, nullptr, fetch.pinned);
    if (decoded) decoded(tables);
  }
  marks.mark(StepPhase::fetch);
  return partial;
}

}  // namespace pleshard
