#include <algorithm>
#include <deque>
#include <mutex>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/option_names.hpp"
#include "engine/exchange_strategy.hpp"
#include "engine/gather_reduce_exchange.hpp"
#include "engine/reduce_scatter_exchange.hpp"

namespace pleshard {

namespace {

// The registry: the built-in strategies first, in the ids ExchangeStrategy gives them.
// Entries are never moved (a deque), so names handed out as C strings stay valid.
class StrategyRegistry {
 public:
  static StrategyRegistry& instance() {
    static StrategyRegistry registry;
    return registry;
  }

  ExchangeStrategy add(StrategyDescriptor d) {
    const std::lock_guard lock(lock_);
    if (d.name.empty() || d.name == "auto" || !d.groups || !d.make)
      throw InputError("exchange strategy \"" + d.name +
                       "\": a strategy needs a name other than auto, its groups "
                       "and its factory");
    for (const auto& e : entries_)
      if (e.name == d.name) throw InputError("exchange strategy \"" + d.name + "\" is registered already");
    entries_.push_back(std::move(d));
    return ExchangeStrategy::of_id(static_cast<int>(entries_.size()));
  }

  const StrategyDescriptor& at(ExchangeStrategy s) {
    const std::lock_guard lock(lock_);
    if (s.id() < 1 || static_cast<std::size_t>(s.id()) > entries_.size())
      throw SystemError("exchange strategy " + std::to_string(s.id()) + " is not registered");
    return entries_[static_cast<std::size_t>(s.id() - 1)];
  }

  std::size_t size() {
    const std::lock_guard lock(lock_);
    return entries_.size();
  }

 private:
  StrategyRegistry() {
    for (auto* made :
         {gather_reduce_strategy, reduce_scatter_strategy, owner_strategy, hierarchical_strategy, peer_read_strategy})
      entries_.push_back(made());
  }

  std::mutex lock_;
  std::deque<StrategyDescriptor> entries_;
};

}  // namespace

ExchangeStrategy register_exchange_strategy(StrategyDescriptor descriptor) {
  return StrategyRegistry::instance().add(std::move(descriptor));
}

const StrategyDescriptor& descriptor_of(ExchangeStrategy strategy) { return StrategyRegistry::instance().at(strategy); }

std::vector<ExchangeStrategy> registered_strategies() {
  std::vector<ExchangeStrategy> out;
  const auto n = static_cast<int>(StrategyRegistry::instance().size());
  for (int id = 1; id <= n; ++id) out.push_back(ExchangeStrategy::of_id(id));
  return out;
}

std::vector<std::string> exchange_strategy_names() {
  std::vector<std::string> names{"auto"};
  for (const ExchangeStrategy s : registered_strategies()) names.push_back(descriptor_of(s).name);
  return names;
}

std::string exchange_strategy_list() { return or_list(exchange_strategy_names(), ", "); }

std::string exchange_strategy_help() {
  std::string help;
  std::vector<const StrategyDescriptor*> by_auto;
  for (const ExchangeStrategy s : registered_strategies()) {
    const StrategyDescriptor& d = descriptor_of(s);
    help += d.name + " (" + d.help + "), ";
    if (d.chosen_by_auto) by_auto.push_back(&d);
  }
  std::stable_sort(by_auto.begin(), by_auto.end(),
                   [](const auto* a, const auto* b) { return a->auto_order < b->auto_order; });
  std::string rule;
  for (const StrategyDescriptor* d : by_auto)
    rule += (rule.empty() ? "" : ", ") + (d->auto_help.empty() ? "else " + d->name : d->name + " " + d->auto_help);
  return help + "or auto (" + rule + ")";
}

const char* to_string(ExchangeStrategy strategy) {
  return strategy == ExchangeStrategy::automatic ? "auto" : descriptor_of(strategy).name.c_str();
}

ExchangeStrategy parse_exchange_strategy(std::string_view name) {
  const std::vector<std::string> names = exchange_strategy_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return ExchangeStrategy::of_id(static_cast<int>(i));
  throw InputError(option_quoted(Option::exchange, name) + ": expected " + or_list(names));
}

std::vector<ExchangeGroup> slot_groups(const Topology& topology) {
  // Under sequence parallelism the TP group is the ETP group.
  return {ExchangeGroup::etp_dp, topology.sequence_parallel() ? ExchangeGroup::tp : ExchangeGroup::etp};
}

std::unique_ptr<Exchange> make_slot_exchange(const ExchangeContext& context, const char* name, bool scatter) {
  // Shares where there are several ranks to share: under sequence parallelism (a TP group of
  // one rank has nothing to split), or where asked over a group.
  const ExchangeComms& comms = context.comms;
  const bool sequence_parallel = comms.tp != nullptr && context.topology.sequence_parallel();
  std::unique_ptr<PartialCombine> combine;
  if (sequence_parallel || (scatter && comms.etp != nullptr)) {
    combine = std::make_unique<ReduceScatterCombine>(context);
  } else {
    combine = std::make_unique<AllReduceCombine>(context);
  }
  return std::make_unique<SlotExchange>(context, std::move(combine), name);
}

}  // namespace pleshard
