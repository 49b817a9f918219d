#include "engine/gather_reduce_exchange.hpp"

#include "engine/detail/exchange_steps.hpp"
#include "engine/exchange_strategy.hpp"

namespace pleshard {

using namespace detail;

void AllReduceCombine::run(const PartialRows& partial, int /*out_slot*/, StepMarks& marks, ExchangeTraffic& step,
                           std::vector<EmbeddingView>& views) {
  const std::size_t layers = layers_of(ctx_);
  Communicator* group = ctx_.comms.etp;
  if (group != nullptr) {
    const Element element = owned_element(ctx_.dtype);
    group->all_reduce(partial.data, layers * partial.layer_bytes / element_bytes(element), element, ReduceOp::owned);
    step.bytes_sent += all_reduce_bytes(group->size(), layers * partial.layer_bytes);
  }
  marks.mark(StepPhase::combine, group != nullptr);
  my_views(partial, views);
}

bool AllReduceCombine::views_before(const PartialRows& partial, std::vector<EmbeddingView>& views) const {
  if (ctx_.comms.etp != nullptr) return false;
  my_views(partial, views);
  return true;
}

void AllReduceCombine::my_views(const PartialRows& partial, std::vector<EmbeddingView>& views) const {
  const std::size_t layers = layers_of(ctx_);
  const std::size_t my_slot = static_cast<std::size_t>(ctx_.topology.etp_dp_rank()) *
                              static_cast<std::size_t>(partial.slot_tokens) * token_bytes(ctx_);
  const std::size_t offset = ctx_.plan.shape().slots > 1 ? my_slot : 0;
  views.resize(layers);
  for (std::size_t d = 0; d < layers; ++d)
    views[d] = {partial.data + d * partial.layer_bytes + offset, 0, partial.tokens, ctx_.width, ctx_.dtype};
}

StrategyDescriptor gather_reduce_strategy() {
  StrategyDescriptor d;
  d.name = "gather-reduce";
  d.help = "tokens gathered, partial rows all-reduced";
  d.groups = slot_groups;
  d.chosen_by_auto = [](const ExchangeFacts&) { return true; };  // where nothing before it applies
  d.auto_order = 1;
  d.make = [](const ExchangeContext& c) { return make_slot_exchange(c, "gather-reduce"); };
  return d;
}

}  // namespace pleshard
