#include "engine/gather_reduce_exchange.hpp"

#include <string>

#include "core/error.hpp"
#include "engine/detail/exchange_steps.hpp"

namespace pleshard {

using namespace detail;

GatherReduceExchange::GatherReduceExchange(const ExchangeContext& context, bool reduce_scatter, const char* name)
    : ctx_(context),
      reduce_scatter_(reduce_scatter),
      name_(name != nullptr  ? name
            : reduce_scatter ? "reduce-scatter"
                             : "gather-reduce") {
  const std::int64_t max_tokens = ctx_.plan.shape().max_slot_tokens;
  const std::size_t layers = layers_of(ctx_);
  const auto slots = static_cast<std::size_t>(ctx_.plan.shape().slots);
  const int tp = ctx_.topology.tp;
  const auto share = static_cast<std::size_t>(ceil_div(max_tokens, tp));
  const std::size_t padded = sequence_parallel() ? share * static_cast<std::size_t>(tp) : max_tokens;
  // Reduce-scattered slots of several TP ranks: the engine pads slots to a multiple of TP
  // (slot_multiple), so every share is whole.
  if (scatters() && !sequence_parallel() && tp > 1 && max_tokens % tp != 0)
    throw SystemError("reduce-scatter exchange: slots of " + std::to_string(max_tokens) + " tokens for TP " +
                      std::to_string(tp));
  const bool gathers = scatters() && !sequence_parallel() && tp > 1;
  const int out_slots = ctx_.output_slots;
  partial_.add(ctx_.workspace, layers * slots * padded * token_bytes(ctx_), scatters() ? 1 : out_slots);
  received_.add(ctx_.workspace, scatters() ? layers * share * token_bytes(ctx_) : 0, gathers ? 1 : out_slots);
  gathered_.add(ctx_.workspace, gathers ? layers * static_cast<std::size_t>(max_tokens) * token_bytes(ctx_) : 0,
                out_slots);
}

std::int64_t GatherReduceExchange::max_query_ids() const {
  const PlanShape& s = ctx_.plan.shape();
  return static_cast<std::int64_t>(s.slots) * s.max_slot_tokens * s.heads;
}

void GatherReduceExchange::run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) {
  StepPlan& plan = ctx_.plan;
  const std::int64_t slot_tokens = plan.slot_tokens();
  const int slots = plan.shape().slots;
  const std::size_t layers = layers_of(ctx_);
  const std::size_t row_bytes = token_bytes(ctx_);
  ExchangeTraffic step{1, tokens};
  step.ids = tokens * plan.shape().heads * static_cast<std::int64_t>(layers);

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
  // Where the store reads the tables in place, the decode hashes its own keys: a launch
  // fewer, and the ids are never written (the hash phase is then part of the decode's). A
  // slot of my own is left in pinned memory for that decode, which carries it in its
  // parameters where it can, or in a CUDA graph reads it there (another launch saved).
  const kernels::StepHash hashing = plan.hashing(gathers_slots ? plan.group_blocks() : plan.my_block(), slots);
  const bool decode_hashes = ctx_.store.reads_in_place(plan.ids_per_layer());
  if (!decode_hashes) plan.hash(gathers_slots ? plan.group_blocks() : plan.my_block_in_space(), slots);
  marks.mark(StepPhase::hash, !decode_hashes);

  // 2. The rows I own of every id; zeros for the rest.
  const int tp = ctx_.topology.tp;
  const std::int64_t padded = sequence_parallel() ? ceil_div(slot_tokens, tp) * tp : slot_tokens * slots;
  const std::size_t layer_bytes = static_cast<std::size_t>(padded) * row_bytes;
  std::vector<RowQuery> queries(layers);
  for (std::size_t d = 0; d < layers; ++d) queries[d] = {plan.ids(static_cast<int>(d)), plan.ids_per_layer()};
  auto* partial = partial_.at(ctx_.workspace, out_slot);
  fetch_and_decode(ctx_, queries, partial, layer_bytes, marks, decode_hashes ? &hashing : nullptr,
                   gathers_slots ? kernels::PinnedBlock{} : plan.my_block_in_pinned());

  // 3. Combine over the ETP group: every layer in one all-reduce, or each layer
  // reduce-scattered into the ranks' shares (then gathered over TP where my DP rank's TP
  // ranks each need the whole slot).
  const Element element = owned_element(ctx_.dtype);
  const std::size_t element_size = element_bytes(element);
  auto* received = received_.at(ctx_.workspace, out_slot);
  auto* gathered = gathered_.at(ctx_.workspace, out_slot);
  const std::size_t share_bytes = static_cast<std::size_t>(ceil_div(slot_tokens, tp)) * row_bytes;
  const bool gathers = scatters() && !sequence_parallel() && tp > 1;
  if (scatters()) {
    Communicator& group = sequence_parallel() ? *ctx_.comms.tp : *ctx_.comms.etp;
    for (std::size_t d = 0; d < layers; ++d) {
      group.reduce_scatter(partial + d * layer_bytes, received + d * share_bytes, share_bytes / element_size, element,
                           ReduceOp::owned);
      step.bytes_sent += gather_bytes(group.size(), share_bytes * static_cast<std::size_t>(group.size()));
      if (gathers) {
        ctx_.comms.tp->all_gather(
            {received + d * share_bytes, share_bytes},
            {gathered + d * share_bytes * static_cast<std::size_t>(tp), share_bytes * static_cast<std::size_t>(tp)});
        step.bytes_sent += gather_bytes(tp, share_bytes * static_cast<std::size_t>(tp));
      }
    }
  } else if (ctx_.comms.etp != nullptr) {
    ctx_.comms.etp->all_reduce(partial, layers * layer_bytes / element_size, element, ReduceOp::owned);
    step.bytes_sent += all_reduce_bytes(ctx_.comms.etp->size(), layers * layer_bytes);
  }
  marks.mark(StepPhase::combine, scatters() || ctx_.comms.etp != nullptr);

  views.resize(layers);
  const RowRange slice =
      sequence_parallel() ? sequence_slice(tokens, tp, ctx_.topology.tp_rank()) : RowRange{0, tokens};
  const std::size_t slot_offset =
      static_cast<std::size_t>(ctx_.topology.etp_dp_rank()) * static_cast<std::size_t>(slot_tokens) * row_bytes;
  for (std::size_t d = 0; d < layers; ++d) {
    const std::uint8_t* data = gathers      ? gathered + d * share_bytes * static_cast<std::size_t>(tp)
                               : scatters() ? received + d * share_bytes
                                            : partial + d * layer_bytes + (slots > 1 ? slot_offset : 0);
    views[d] = {data, slice.begin, slice.size(), ctx_.width, ctx_.dtype};
  }
  traffic_ += step;
}

}  // namespace pleshard
