#include "engine/exchange.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/option_names.hpp"
#include "engine/detail/exchange_steps.hpp"
#include "engine/exchange_strategy.hpp"
#include "engine/local_exchange.hpp"

namespace pleshard {

void RegionRing::add(Workspace& workspace, std::size_t bytes, int count) {
  for (int k = 0; k < count; ++k) copies.push_back(workspace.add<std::uint8_t>(bytes));
}

void Exchange::begin(std::int64_t /*tokens*/, StepMarks& /*marks*/) {
  throw SystemError(std::string("the ") + name() + " exchange runs a step whole");
}

void Exchange::finish(int /*out_slot*/, StepMarks& /*marks*/, std::vector<EmbeddingView>& /*views*/,
                      const std::function<void()>& /*fetched*/) {
  throw SystemError(std::string("the ") + name() + " exchange runs a step whole");
}

void HalvedExchange::run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) {
  submit(tokens, marks);
  complete(out_slot, marks, views, {});
}

void HalvedExchange::begin(std::int64_t tokens, StepMarks& marks) {
  if (!begins_ahead()) Exchange::begin(tokens, marks);
  submit(tokens, marks);
}

void HalvedExchange::finish(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
                            const std::function<void()>& fetched) {
  if (!begins_ahead()) Exchange::finish(out_slot, marks, views, fetched);
  complete(out_slot, marks, views, fetched);
}

ExchangeTraffic& ExchangeTraffic::operator+=(const ExchangeTraffic& o) {
  steps += o.steps;
  tokens += o.tokens;
  bytes_sent += o.bytes_sent;
  ids += o.ids;
  ids_sent += o.ids_sent;
  rows_sent += o.rows_sent;
  bytes_between_nodes += o.bytes_between_nodes;
  rows_from_peers += o.rows_from_peers;
  bytes_from_peers += o.bytes_from_peers;
  return *this;
}

ExchangeTraffic ExchangeTraffic::operator-(const ExchangeTraffic& o) const {
  return {steps - o.steps,
          tokens - o.tokens,
          bytes_sent - o.bytes_sent,
          ids - o.ids,
          ids_sent - o.ids_sent,
          rows_sent - o.rows_sent,
          bytes_between_nodes - o.bytes_between_nodes,
          rows_from_peers - o.rows_from_peers,
          bytes_from_peers - o.bytes_from_peers};
}

RowRange sequence_slice(std::int64_t tokens, int tp, int tp_rank) {
  const std::int64_t per_rank = detail::ceil_div(tokens, tp);
  const std::int64_t first = std::min(tokens, per_rank * tp_rank);
  return {first, std::min(tokens, first + per_rank)};
}

ExchangeStrategy choose_exchange(ExchangeStrategy requested, const ExchangeFacts& facts, bool local) {
  if (local) {
    if (requested != ExchangeStrategy::automatic)
      throw InputError(option_is(Option::exchange, to_string(requested)) +
                       ": the disk tier exchanges nothing (every rank reads the rows of its own tokens)");
    return ExchangeStrategy::automatic;
  }
  if (requested != ExchangeStrategy::automatic) {
    const StrategyDescriptor& d = descriptor_of(requested);
    if (d.check) d.check(facts.topology, facts.cuda_graphs);
    return requested;
  }
  const StrategyDescriptor* best = nullptr;
  ExchangeStrategy chosen = ExchangeStrategy::gather_reduce;
  for (const ExchangeStrategy s : registered_strategies()) {
    const StrategyDescriptor& d = descriptor_of(s);
    if (!d.chosen_by_auto || (best != nullptr && best->auto_order <= d.auto_order)) continue;
    if (!d.chosen_by_auto(facts)) continue;
    best = &d;
    chosen = s;
  }
  return chosen;
}

std::unique_ptr<Exchange> make_exchange(ExchangeStrategy strategy, bool local, const ExchangeContext& context) {
  if (strategy == ExchangeStrategy::automatic)
    return local ? std::make_unique<LocalExchange>(context) : make_slot_exchange(context, "gather-reduce");
  return descriptor_of(strategy).make(context);
}

}  // namespace pleshard
