#include "engine/reduce_scatter_exchange.hpp"

#include <string>

#include "core/error.hpp"
#include "engine/detail/exchange_steps.hpp"
#include "engine/exchange_strategy.hpp"

namespace pleshard {

using namespace detail;

ReduceScatterCombine::ReduceScatterCombine(const ExchangeContext& context)
    : ctx_(context),
      group_(sequence_parallel() ? ctx_.comms.tp : ctx_.comms.etp),
      tp_gather_(sequence_parallel() ? nullptr : ctx_.comms.tp) {
  if (group_ == nullptr) throw SystemError("reduce-scatter exchange: a group of one rank has nothing to scatter");
  const std::int64_t max_tokens = ctx_.plan.shape().max_slot_tokens;
  const int tp = ctx_.topology.tp;
  if (tp_gather_ != nullptr && max_tokens % tp != 0)
    throw SystemError("reduce-scatter exchange: slots of " + std::to_string(max_tokens) + " tokens for TP " +
                      std::to_string(tp));
  const std::size_t layers = layers_of(ctx_);
  const auto share = static_cast<std::size_t>(ceil_div(max_tokens, tp));
  const int out_slots = ctx_.output_slots;
  received_.add(ctx_.workspace, layers * share * token_bytes(ctx_), tp_gather_ != nullptr ? 1 : out_slots);
  gathered_.add(ctx_.workspace,
                tp_gather_ != nullptr ? layers * static_cast<std::size_t>(max_tokens) * token_bytes(ctx_) : 0,
                out_slots);
}

int ReduceScatterCombine::pad_to() const { return sequence_parallel() ? ctx_.topology.tp : 1; }

void ReduceScatterCombine::run(const PartialRows& partial, int out_slot, StepMarks& marks, ExchangeTraffic& step,
                               std::vector<EmbeddingView>& views) {
  const std::size_t layers = layers_of(ctx_);
  const int tp = ctx_.topology.tp;
  const Element element = owned_element(ctx_.dtype);
  const std::size_t share_bytes = static_cast<std::size_t>(ceil_div(partial.slot_tokens, tp)) * token_bytes(ctx_);
  const std::size_t slot_bytes = share_bytes * static_cast<std::size_t>(tp);
  auto* received = received_.at(ctx_.workspace, out_slot);
  auto* gathered = gathered_.at(ctx_.workspace, out_slot);
  for (std::size_t d = 0; d < layers; ++d) {
    group_->reduce_scatter(partial.data + d * partial.layer_bytes, received + d * share_bytes,
                           share_bytes / element_bytes(element), element, ReduceOp::owned);
    step.bytes_sent += gather_bytes(group_->size(), share_bytes * static_cast<std::size_t>(group_->size()));
    if (tp_gather_ != nullptr) {
      tp_gather_->all_gather({received + d * share_bytes, share_bytes}, {gathered + d * slot_bytes, slot_bytes});
      step.bytes_sent += gather_bytes(tp, slot_bytes);
    }
  }
  marks.mark(StepPhase::combine);
  const RowRange slice = my_slice(ctx_.topology, partial.tokens);
  views.resize(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    const std::uint8_t* data = tp_gather_ != nullptr ? gathered + d * slot_bytes : received + d * share_bytes;
    views[d] = {data, slice.begin, slice.size(), ctx_.width, ctx_.dtype};
  }
}

StrategyDescriptor reduce_scatter_strategy() {
  StrategyDescriptor d;
  d.name = "reduce-scatter";
  d.help = "partial rows reduce-scattered to their ranks";
  d.groups = [](const Topology& t) {
    std::vector<ExchangeGroup> groups = slot_groups(t);
    if (!t.sequence_parallel()) groups.push_back(ExchangeGroup::tp);  // the TP shares gathered
    return groups;
  };
  d.shares_by_tp = true;
  d.make = [](const ExchangeContext& c) { return make_slot_exchange(c, "reduce-scatter", true); };
  return d;
}

}  // namespace pleshard
