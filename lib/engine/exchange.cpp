#include "engine/exchange.hpp"

#include <algorithm>
#include <string>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/option_names.hpp"
#include "engine/detail/exchange_steps.hpp"
#include "engine/gather_reduce_exchange.hpp"
#include "engine/hierarchical_exchange.hpp"
#include "engine/local_exchange.hpp"
#include "engine/owner_exchange.hpp"
#include "engine/reduce_scatter_exchange.hpp"

namespace pleshard {

namespace {

constexpr EnumNames<ExchangeStrategy, 5> k_strategies{{{ExchangeStrategy::automatic, "auto"},
                                                       {ExchangeStrategy::gather_reduce, "gather-reduce"},
                                                       {ExchangeStrategy::reduce_scatter, "reduce-scatter"},
                                                       {ExchangeStrategy::owner, "owner"},
                                                       {ExchangeStrategy::hierarchical, "hierarchical"}}};

}  // namespace

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

const char* to_string(ExchangeStrategy strategy) { return name_of(k_strategies, strategy); }

ExchangeStrategy parse_exchange_strategy(std::string_view name) {
  return parse_value(k_strategies, name, Option::exchange);
}

ExchangeTraffic& ExchangeTraffic::operator+=(const ExchangeTraffic& o) {
  steps += o.steps;
  tokens += o.tokens;
  bytes_sent += o.bytes_sent;
  ids += o.ids;
  ids_sent += o.ids_sent;
  rows_sent += o.rows_sent;
  bytes_between_nodes += o.bytes_between_nodes;
  return *this;
}

ExchangeTraffic ExchangeTraffic::operator-(const ExchangeTraffic& o) const {
  return {steps - o.steps,
          tokens - o.tokens,
          bytes_sent - o.bytes_sent,
          ids - o.ids,
          ids_sent - o.ids_sent,
          rows_sent - o.rows_sent,
          bytes_between_nodes - o.bytes_between_nodes};
}

RowRange sequence_slice(std::int64_t tokens, int tp, int tp_rank) {
  const std::int64_t per_rank = detail::ceil_div(tokens, tp);
  const std::int64_t first = std::min(tokens, per_rank * tp_rank);
  return {first, std::min(tokens, first + per_rank)};
}

ExchangeStrategy choose_exchange(ExchangeStrategy requested, const Topology& topology, bool local, bool cuda_graphs) {
  if (local) {
    if (requested != ExchangeStrategy::automatic)
      throw InputError(option_is(Option::exchange, to_string(requested)) +
                       ": the disk tier exchanges nothing (every rank reads the rows of its own tokens)");
    return ExchangeStrategy::automatic;
  }
  // One rank per ETP group exchanges nothing whatever the strategy (make_exchange): only
  // groups of several ranks size the owner strategies' messages. The flat form sends
  // fixed-size messages under graphs (ExchangeContext::owner_fixed_below); the gateways of
  // the two-level form merge their node's ids on the host.
  if (requested == ExchangeStrategy::hierarchical && cuda_graphs && topology.etp > 1)
    throw InputError(option_is(Option::exchange, to_string(requested)) +
                     " merges each node's ids on the host every step, so its steps cannot be captured in CUDA graphs "
                     "(use owner, gather-reduce or reduce-scatter with " +
                     option_name(Option::cuda_graph) + ")");
  if (requested != ExchangeStrategy::automatic) return requested;
  return topology.etp > 1 && !cuda_graphs ? ExchangeStrategy::owner : ExchangeStrategy::gather_reduce;
}

std::unique_ptr<Exchange> make_exchange(ExchangeStrategy strategy, bool local, const ExchangeContext& context) {
  if (local) return std::make_unique<LocalExchange>(context);
  const ExchangeComms& comms = context.comms;
  const bool owners = strategy == ExchangeStrategy::owner || strategy == ExchangeStrategy::hierarchical;
  // In a group of one rank every strategy is the identity (look up, decode, no combine), which
  // the slots' flow is without its collectives: no owner planning on the host there.
  if (owners && context.topology.etp > 1) {
    if (strategy == ExchangeStrategy::owner)  // under sequence parallelism the ETP group is the TP group
      return std::make_unique<OwnerExchange>(
          context, OwnerGroup::of(comms.etp != nullptr ? comms.etp : comms.tp, comms.etp_host));
    // One rank per node: the owners across nodes are the whole ETP group, one level.
    if (comms.etp_node_host == nullptr)
      return std::make_unique<OwnerExchange>(context, OwnerGroup::of(comms.etp_cross, comms.etp_cross_host),
                                             "hierarchical");
    return std::make_unique<HierarchicalExchange>(context);
  }
  // Shares where there are several ranks to share: under sequence parallelism (a TP group of
  // one rank has nothing to split), or as the reduce-scatter strategy over a group.
  const bool sequence_parallel = comms.tp != nullptr && context.topology.sequence_parallel();
  std::unique_ptr<PartialCombine> combine;
  if (sequence_parallel || (strategy == ExchangeStrategy::reduce_scatter && comms.etp != nullptr)) {
    combine = std::make_unique<ReduceScatterCombine>(context);
  } else {
    combine = std::make_unique<AllReduceCombine>(context);
  }
  const char* name = strategy == ExchangeStrategy::automatic ? "gather-reduce" : to_string(strategy);
  return std::make_unique<SlotExchange>(context, std::move(combine), name);
}

}  // namespace pleshard
