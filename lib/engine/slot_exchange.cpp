#include "engine/slot_exchange.hpp"

#include <utility>

namespace pleshard {

SlotExchange::SlotExchange(const ExchangeContext& context, std::unique_ptr<PartialCombine> combine, const char* name)
    : combine_(std::move(combine)),
      lookup_(context, combine_->pad_to(), combine_->in_place() ? context.output_slots : 1),
      name_(name),
      heads_x_layers_(static_cast<std::int64_t>(context.plan.shape().heads) * context.plan.shape().layers) {}

void SlotExchange::run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) {
  ExchangeTraffic step{1, tokens};
  step.ids = tokens * heads_x_layers_;
  std::uint8_t* partial = lookup_.run(out_slot, marks, step);
  combine_->run(partial, lookup_.layer_bytes(), tokens, out_slot, marks, step, views);
  traffic_ += step;
}

}  // namespace pleshard
