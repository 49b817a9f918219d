#include "engine/slot_exchange.hpp"

#include <functional>
#include <utility>

#include "engine/table_readiness.hpp"

namespace pleshard {

SlotExchange::SlotExchange(const ExchangeContext& context, std::unique_ptr<PartialCombine> combine, const char* name)
    : combine_(std::move(combine)),
      lookup_(context, combine_->pad_to(), combine_->in_place() ? context.output_slots : 1),
      readiness_(context.readiness),
      store_(context.store),
      plan_(context.plan),
      name_(name),
      heads_x_layers_(static_cast<std::int64_t>(context.plan.shape().heads) * context.plan.shape().layers),
      begun_(name) {}

void SlotExchange::run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) {
  ExchangeTraffic step{1, tokens};
  step.ids = tokens * heads_x_layers_;
  // A started step whose combine moves nothing signals each part's tables as they are
  // decoded (engine/table_readiness.hpp); any other step decodes every part at once.
  PartialRows partial{lookup_.partial(out_slot), lookup_.layer_bytes(), plan_.slot_tokens(), tokens};
  std::vector<EmbeddingView> early;
  std::function<void(std::span<const int>)> decoded;
  if (readiness_ != nullptr && readiness_->active() && combine_->views_before(partial, early))
    decoded = [&](std::span<const int> tables) { readiness_->ready(tables, early); };
  lookup_.run(out_slot, marks, step, decoded);
  combine_->run(partial, out_slot, marks, step, views);
  traffic_ += step;
}

void SlotExchange::begin(std::int64_t tokens, StepMarks& marks) {
  if (!begins_ahead()) Exchange::begin(tokens, marks);
  Begun begun{tokens, {1, tokens}, {}};
  begun.step.ids = tokens * heads_x_layers_;
  begun.fetch = lookup_.begin(marks, begun.step);
  begun_.push(begun);  // once submitted: a failed begin begins nothing
}

void SlotExchange::finish(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
                          const std::function<void()>& fetched) {
  if (!begins_ahead()) Exchange::finish(out_slot, marks, views, fetched);
  Begun begun = begun_.pop();
  const PartialRows partial{lookup_.finish(begun.fetch, out_slot, marks, fetched), begun.fetch.layer_bytes,
                            begun.fetch.slot_tokens, begun.tokens};
  combine_->run(partial, out_slot, marks, begun.step, views);
  traffic_ += begun.step;
}

}  // namespace pleshard
