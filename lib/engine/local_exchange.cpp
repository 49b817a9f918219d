#include "engine/local_exchange.hpp"

#include "engine/detail/exchange_steps.hpp"

namespace pleshard {

using namespace detail;

LocalExchange::LocalExchange(const ExchangeContext& context) : ctx_(context) {
  out_.add(ctx_.workspace,
           layers_of(ctx_) * static_cast<std::size_t>(ctx_.plan.shape().max_slot_tokens) * token_bytes(ctx_),
           ctx_.output_slots);
}

std::int64_t LocalExchange::max_query_ids() const {
  return ctx_.plan.shape().max_slot_tokens * ctx_.plan.shape().heads;
}

void LocalExchange::run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) {
  StepPlan& plan = ctx_.plan;
  const std::size_t layers = layers_of(ctx_);
  const int heads = plan.shape().heads;
  plan.hash(plan.my_block_in_space(), 1);
  marks.mark(StepPhase::hash);
  const Topology& t = ctx_.topology;
  const RowRange slice = t.sequence_parallel() ? sequence_slice(tokens, t.tp, t.tp_rank()) : RowRange{0, tokens};
  std::vector<RowQuery> queries(layers);
  for (std::size_t d = 0; d < layers; ++d)
    queries[d] = {plan.ids(static_cast<int>(d)) + slice.begin * heads, slice.size() * heads};
  const std::size_t layer_bytes = static_cast<std::size_t>(plan.slot_tokens()) * token_bytes(ctx_);
  auto* out = out_.at(ctx_.workspace, out_slot);
  fetch_and_decode(ctx_, queries, out, layer_bytes, marks);
  views.resize(layers);
  for (std::size_t d = 0; d < layers; ++d)
    views[d] = {out + d * layer_bytes, slice.begin, slice.size(), ctx_.width, ctx_.dtype};
  traffic_ += {1, tokens, 0, slice.size() * heads * static_cast<std::int64_t>(layers), 0, 0};
}

}  // namespace pleshard
