#include "engine/exchange.hpp"

#include <algorithm>

#include "exec/step_kernels.hpp"

namespace pleshard {

namespace {

std::size_t layers_of(const ExchangeContext& c) { return static_cast<std::size_t>(c.plan.shape().layers); }

std::size_t token_bytes(const ExchangeContext& c) {
  return static_cast<std::size_t>(c.width) * kernels::out_bytes(c.dtype);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Fetches the rows of every layer's query and decodes them, layer d's into
// out + d * layer_bytes (entries in query order, head_dim values each).
void fetch_and_decode(const ExchangeContext& c, std::span<const RowQuery> queries, std::uint8_t* out,
                      std::size_t layer_bytes, StepMarks& marks) {
  c.store.submit(queries);
  const std::span<const kernels::DecodeTask> fetched = c.store.wait();
  marks.mark(StepPhase::fetch);
  std::vector<kernels::DecodeTask> tasks(fetched.begin(), fetched.end());
  for (std::size_t d = 0; d < tasks.size(); ++d) tasks[d].out = out + d * layer_bytes;
  decode_step(c.space, tasks, c.dtype);
  marks.mark(StepPhase::decode);
}

Element owned_element(OutDtype dtype) { return kernels::out_bytes(dtype) == 2 ? Element::u16 : Element::u32; }

}  // namespace

RowRange sequence_slice(std::int64_t tokens, int tp, int tp_rank) {
  const std::int64_t per_rank = ceil_div(tokens, tp);
  const std::int64_t first = std::min(tokens, per_rank * tp_rank);
  return {first, std::min(tokens, first + per_rank)};
}

GatherReduceExchange::GatherReduceExchange(const ExchangeContext& context) : ctx_(context) {
  const std::int64_t max_tokens = ctx_.plan.shape().max_slot_tokens;
  const std::size_t layers = layers_of(ctx_);
  const auto slots = static_cast<std::size_t>(ctx_.plan.shape().slots);
  const int tp = ctx_.topology.tp;
  const auto padded = static_cast<std::size_t>(sequence_parallel() ? ceil_div(max_tokens, tp) * tp : max_tokens);
  partial_ = ctx_.workspace.add<std::uint8_t>(layers * slots * padded * token_bytes(ctx_));
  received_ = ctx_.workspace.add<std::uint8_t>(
      sequence_parallel() ? layers * static_cast<std::size_t>(ceil_div(max_tokens, tp)) * token_bytes(ctx_) : 0);
}

void GatherReduceExchange::run(std::int64_t tokens, StepMarks& marks, std::vector<EmbeddingView>& views) {
  StepPlan& plan = ctx_.plan;
  const std::int64_t slot_tokens = plan.slot_tokens();
  const int slots = plan.shape().slots;
  const std::size_t layers = layers_of(ctx_);
  const std::size_t row_bytes = token_bytes(ctx_);

  // 1. The ETP group's batches, one slot per DP rank, then every layer's ids.
  const std::int64_t* blocks = plan.my_block();
  if (ctx_.comms.etp_dp != nullptr) {
    const std::size_t bytes = plan.block_bytes();
    ctx_.comms.etp_dp->all_gather(
        {reinterpret_cast<const std::uint8_t*>(plan.my_block()), bytes},
        {reinterpret_cast<std::uint8_t*>(plan.group_blocks()), bytes * static_cast<std::size_t>(slots)});
    blocks = plan.group_blocks();
  }
  marks.mark(StepPhase::gather);
  plan.hash(blocks, slots);
  marks.mark(StepPhase::hash);

  // 2. The rows I own of every id; zeros for the rest.
  const int tp = ctx_.topology.tp;
  const std::int64_t padded = sequence_parallel() ? ceil_div(slot_tokens, tp) * tp : slot_tokens * slots;
  const std::size_t layer_bytes = static_cast<std::size_t>(padded) * row_bytes;
  std::vector<RowQuery> queries(layers);
  for (std::size_t d = 0; d < layers; ++d) queries[d] = {plan.ids(static_cast<int>(d)), plan.ids_per_layer()};
  auto* partial = ctx_.workspace.at<std::uint8_t>(partial_);
  fetch_and_decode(ctx_, queries, partial, layer_bytes, marks);

  // 3. Combine over the ETP group: every layer in one all-reduce, or a reduce-scatter of
  // each layer's sequence slices.
  const Element element = owned_element(ctx_.dtype);
  const std::size_t element_size = element_bytes(element);
  auto* received = ctx_.workspace.at<std::uint8_t>(received_);
  const std::size_t slice_bytes = static_cast<std::size_t>(ceil_div(slot_tokens, tp)) * row_bytes;
  if (sequence_parallel()) {
    for (std::size_t d = 0; d < layers; ++d)
      ctx_.comms.tp->reduce_scatter(partial + d * layer_bytes, received + d * slice_bytes, slice_bytes / element_size,
                                    element, ReduceOp::owned);
  } else if (ctx_.comms.etp != nullptr) {
    ctx_.comms.etp->all_reduce(partial, layers * layer_bytes / element_size, element, ReduceOp::owned);
  }
  marks.mark(StepPhase::combine);

  views.resize(layers);
  const RowRange slice =
      sequence_parallel() ? sequence_slice(tokens, tp, ctx_.topology.tp_rank()) : RowRange{0, tokens};
  const std::size_t slot_offset =
      static_cast<std::size_t>(ctx_.topology.etp_dp_rank()) * static_cast<std::size_t>(slot_tokens) * row_bytes;
  for (std::size_t d = 0; d < layers; ++d) {
    const std::uint8_t* data =
        sequence_parallel() ? received + d * slice_bytes : partial + d * layer_bytes + (slots > 1 ? slot_offset : 0);
    views[d] = {data, slice.begin, slice.size(), ctx_.width, ctx_.dtype};
  }
}

LocalExchange::LocalExchange(const ExchangeContext& context) : ctx_(context) {
  out_ = ctx_.workspace.add<std::uint8_t>(
      layers_of(ctx_) * static_cast<std::size_t>(ctx_.plan.shape().max_slot_tokens) * token_bytes(ctx_));
}

void LocalExchange::run(std::int64_t tokens, StepMarks& marks, std::vector<EmbeddingView>& views) {
  StepPlan& plan = ctx_.plan;
  const std::size_t layers = layers_of(ctx_);
  const int heads = plan.shape().heads;
  plan.hash(plan.my_block(), 1);
  marks.mark(StepPhase::hash);
  const Topology& t = ctx_.topology;
  const RowRange slice = t.sequence_parallel() ? sequence_slice(tokens, t.tp, t.tp_rank()) : RowRange{0, tokens};
  std::vector<RowQuery> queries(layers);
  for (std::size_t d = 0; d < layers; ++d)
    queries[d] = {plan.ids(static_cast<int>(d)) + slice.begin * heads, slice.size() * heads};
  const std::size_t layer_bytes = static_cast<std::size_t>(plan.slot_tokens()) * token_bytes(ctx_);
  auto* out = ctx_.workspace.at<std::uint8_t>(out_);
  fetch_and_decode(ctx_, queries, out, layer_bytes, marks);
  views.resize(layers);
  for (std::size_t d = 0; d < layers; ++d)
    views[d] = {out + d * layer_bytes, slice.begin, slice.size(), ctx_.width, ctx_.dtype};
}

}  // namespace pleshard
