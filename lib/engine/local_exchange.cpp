#include "engine/local_exchange.hpp"

#include "core/error.hpp"
#include "engine/detail/exchange_steps.hpp"

namespace pleshard {

using namespace detail;

LocalExchange::LocalExchange(const ExchangeContext& context, const char* name, bool one_copy)
    : ctx_(context), name_(name) {
  out_.add(ctx_.workspace,
           layers_of(ctx_) * static_cast<std::size_t>(ctx_.plan.shape().max_slot_tokens) * token_bytes(ctx_),
           ctx_.output_slots);
  if (!one_copy) return;
  const std::size_t layers = layers_of(ctx_);
  std::vector<std::int64_t> bounds;
  for (std::size_t d = 0; d < layers; ++d) {
    // A layer whose rows are mine alone (ExchangeContext::group_copy): every row counts as mine.
    const std::int64_t rows = ctx_.store.layout(static_cast<int>(d)).rows;
    const bool shared = d < ctx_.group_copy.size() && ctx_.group_copy[d];
    const RowRange mine =
        shared ? balanced_range(rows, ctx_.topology.etp, ctx_.topology.etp_rank()) : RowRange{0, rows};
    bounds.insert(bounds.end(), {mine.begin, mine.end});
  }
  StepSpace& space = ctx_.space;
  auto* at = static_cast<std::uint8_t*>(
      space.allocate(bounds.size() * sizeof(std::int64_t) + layers * sizeof(unsigned long long)));
  tally_.bounds = reinterpret_cast<const std::int64_t*>(at);
  tally_.outside = reinterpret_cast<unsigned long long*>(at + bounds.size() * sizeof(std::int64_t));
  try {
    read_back_ = static_cast<unsigned long long*>(space.allocate_host(layers * sizeof(unsigned long long)));
    space.copy_from_host(at, bounds.data(), bounds.size() * sizeof(std::int64_t));
    space.fill_zero(tally_.outside, layers * sizeof(unsigned long long));
    space.synchronize();
  } catch (...) {
    release_tally();
    throw;
  }
}

LocalExchange::~LocalExchange() { release_tally(); }

void LocalExchange::release_tally() noexcept {
  if (tally_.bounds == nullptr) return;
  try {
    ctx_.space.synchronize();  // no step still counts into it
  } catch (...) {              // a failed job frees what it can
  }
  ctx_.space.deallocate(const_cast<std::int64_t*>(tally_.bounds));
  if (read_back_ != nullptr) ctx_.space.deallocate_host(read_back_);
  tally_ = {};
  read_back_ = nullptr;
}

ExchangeTraffic LocalExchange::device_counted() const {
  ExchangeTraffic counted;
  if (tally_.outside == nullptr) return counted;
  const std::size_t layers = layers_of(ctx_);
  ctx_.space.copy_to_host_async(read_back_, tally_.outside, layers * sizeof(unsigned long long));
  ctx_.space.synchronize();
  for (std::size_t d = 0; d < layers; ++d) {
    const auto rows = static_cast<std::int64_t>(read_back_[d]);
    counted.rows_from_peers += rows;
    counted.bytes_from_peers +=
        static_cast<double>(rows) * static_cast<double>(ctx_.store.layout(static_cast<int>(d)).bytes_per_row());
  }
  return counted;
}

std::int64_t LocalExchange::max_query_ids() const {
  return ctx_.plan.shape().max_slot_tokens * ctx_.plan.shape().heads;
}

void LocalExchange::run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) {
  submit(tokens, marks);
  complete(out_slot, marks, views, {});
}

void LocalExchange::begin(std::int64_t tokens, StepMarks& marks) {
  if (!begins_ahead()) Exchange::begin(tokens, marks);
  submit(tokens, marks);
}

void LocalExchange::finish(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
                           const std::function<void()>& fetched) {
  if (!begins_ahead()) Exchange::finish(out_slot, marks, views, fetched);
  complete(out_slot, marks, views, fetched);
}

void LocalExchange::submit(std::int64_t tokens, StepMarks& marks) {
  if (begun_count_ - finished_count_ == begun_.size())
    throw SystemError("local exchange: a third step begun before the first finished");
  StepPlan& plan = ctx_.plan;
  const int heads = plan.shape().heads;
  Begun step;
  step.tokens = tokens;
  // A step captured in a CUDA graph (never under sequence parallelism) looks up its whole
  // slot: the graph serves every step of that slot size, the views cut to each one's tokens.
  step.slice = my_slice(ctx_.topology, ctx_.space.capturing() ? plan.slot_tokens() : tokens);
  kernels::IdTally tally = tally_;  // the lookups of my tokens (a graph's: its slot's)
  tally.first_token = step.slice.begin;
  tally.last_token = step.slice.end;
  plan.hash(plan.my_block_in_space(), 1, tally);
  marks.mark(StepPhase::hash);
  step.layer_bytes = static_cast<std::size_t>(plan.slot_tokens()) * token_bytes(ctx_);
  std::vector<RowQuery> queries(layers_of(ctx_));
  for (std::size_t d = 0; d < queries.size(); ++d)
    queries[d] = {plan.ids(static_cast<int>(d)) + step.slice.begin * heads, step.slice.size() * heads};
  ctx_.store.submit(queries);
  begun_[begun_count_++ % begun_.size()] = step;  // once submitted: a failed submit begins nothing
}

void LocalExchange::complete(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
                             const std::function<void()>& fetched) {
  if (finished_count_ == begun_count_) throw SystemError("local exchange: a step finished that was not begun");
  const Begun step = begun_[finished_count_++ % begun_.size()];
  const std::int64_t heads = ctx_.plan.shape().heads;
  // Valid across the next step's submit where the store fetches ahead.
  const std::span<const kernels::DecodeTask> rows = wait_for_rows(ctx_, step.slice.size() * heads, marks);
  if (fetched) fetched();
  auto* out = out_.at(ctx_.workspace, out_slot);
  decode_rows(ctx_, rows, out, step.layer_bytes, marks);
  const std::size_t layers = layers_of(ctx_);
  views.resize(layers);
  for (std::size_t d = 0; d < layers; ++d)
    views[d] = {out + d * step.layer_bytes, step.slice.begin, step.slice.size(), ctx_.width, ctx_.dtype};
  traffic_ += {1, step.tokens, 0, step.slice.size() * heads * static_cast<std::int64_t>(layers), 0, 0};
}

}  // namespace pleshard
