#include "engine/local_exchange.hpp"

#include "engine/detail/exchange_steps.hpp"

namespace pleshard {

using namespace detail;

LocalExchange::LocalExchange(const ExchangeContext& context, const char* name) : ctx_(context), name_(name) {
  out_.add(ctx_.workspace,
           layers_of(ctx_) * static_cast<std::size_t>(ctx_.plan.shape().max_slot_tokens) * token_bytes(ctx_),
           ctx_.output_slots);
  peer_rows_ = PeerRowTally::of(ctx_);
}

ExchangeTraffic LocalExchange::device_counted() const {
  return peer_rows_ != nullptr ? peer_rows_->counted() : ExchangeTraffic{};
}

std::int64_t LocalExchange::max_query_ids() const {
  return ctx_.plan.shape().max_slot_tokens * ctx_.plan.shape().heads;
}

bool LocalExchange::decodes_hashing(RowRange slice, std::int64_t slot_tokens) const {
  return slice == RowRange{0, slot_tokens} && decode_hashes(ctx_, slice.size() * ctx_.plan.shape().heads);
}

void LocalExchange::submit(std::int64_t tokens, StepMarks& marks) {
  StepPlan& plan = ctx_.plan;
  const int heads = plan.shape().heads;
  Begun step;
  step.tokens = tokens;
  // A step captured in a CUDA graph (never under sequence parallelism) looks up its whole
  // slot: the graph serves every step of that slot size, the views cut to each one's tokens.
  step.slice = my_slice(ctx_.topology, ctx_.space.capturing() ? plan.slot_tokens() : tokens);
  // The lookups of my tokens (a graph's: its slot's) counted as they are hashed.
  const kernels::IdTally tally =
      peer_rows_ != nullptr ? peer_rows_->tally(step.slice.begin, step.slice.end) : kernels::IdTally{};
  // Where I look up every token hashed (no sequence slice), a GPU's decode may hash its own
  // keys, and count them, as SlotLookup's does (my block reaches it in its parameters where
  // it fits).
  step.decode_hashes = decodes_hashing(step.slice, plan.slot_tokens());
  if (step.decode_hashes) {
    step.hashing = plan.hashing(plan.my_block(), 1, tally);
  } else {
    plan.hash(plan.my_block_in_space(), 1, tally);
  }
  marks.mark(StepPhase::hash, !step.decode_hashes);
  step.layer_bytes = static_cast<std::size_t>(plan.slot_tokens()) * token_bytes(ctx_);
  std::vector<RowQuery> queries(layers_of(ctx_));
  for (std::size_t d = 0; d < queries.size(); ++d)
    queries[d] = {plan.ids(static_cast<int>(d)) + step.slice.begin * heads, step.slice.size() * heads};
  step.pinned = plan.my_block_in_pinned();  // empty where the hash copied it into the space
  ctx_.store.submit(queries);
  begun_.push(step);  // once submitted: a failed submit begins nothing
}

void LocalExchange::complete(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
                             const std::function<void()>& fetched) {
  const Begun step = begun_.pop();
  const std::int64_t heads = ctx_.plan.shape().heads;
  // Valid across the next step's submit where the store fetches ahead at this step's size.
  const std::int64_t ids = step.slice.size() * heads;
  const std::span<const kernels::DecodeTask> rows = wait_for_rows(ctx_, ids, marks);
  // A decode that hashes reads my block, which the next step's begin() repacks.
  if (fetched && !step.decode_hashes && ctx_.store.fetches_ahead_at(ids)) fetched();
  auto* out = out_.at(ctx_.workspace, out_slot);
  decode_rows(ctx_, rows, out, step.layer_bytes, marks, step.decode_hashes ? &step.hashing : nullptr, step.pinned);
  const std::size_t layers = layers_of(ctx_);
  views.resize(layers);
  for (std::size_t d = 0; d < layers; ++d)
    views[d] = {out + d * step.layer_bytes, step.slice.begin, step.slice.size(), ctx_.width, ctx_.dtype};
  traffic_ += {1, step.tokens, 0, step.slice.size() * heads * static_cast<std::int64_t>(layers), 0, 0};
}

}  // namespace pleshard
