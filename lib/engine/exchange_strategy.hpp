#pragma once
// An exchange strategy as the engine meets it, described once where it is implemented: its
// name and help, the communicator groups it needs under a layout, what it asks of the layout,
// its part in `auto`, and its factory. The built-in strategies each hold theirs in their own
// file (gather_reduce_strategy() in gather_reduce_exchange.cpp, ...) and are listed once, in
// exchange_strategies.cpp; a strategy built outside the library registers its own
// (register_exchange_strategy). Everything that names or picks a strategy — `--exchange`,
// Python's `exchange=`, `auto`, the communicators the engine opens, the step's slots — asks
// the registry, never a name.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dist/topology.hpp"
#include "engine/exchange.hpp"
#include "engine/exchange_groups.hpp"

namespace pleshard {

struct StrategyDescriptor {
  std::string name;  // as `--exchange` and the report name it
  std::string help;  // what it does, in a clause for `--help`
  // The communicator groups it uses under a layout (the engine opens those of more than one
  // rank): every strategy gathers the ETP group's slots (etp_dp) and combines over it (etp,
  // or tp under sequence parallelism) unless it says otherwise.
  std::function<std::vector<ExchangeGroup>(const Topology&)> groups;
  // InputError where the layout, or steps captured in CUDA graphs, do not allow it; unset:
  // always allowed.
  std::function<void(const Topology&, bool cuda_graphs)> check;
  // Whether it needs every ETP group's ranks in node-major blocks of one size (its levels
  // are a node's ranks and one rank of every node); the engine checks the layout.
  bool needs_node_layout = false;
  // Whether its slots split into TP whole shares where it combines over a group without
  // sequence parallelism (the engine pads slots to a multiple of TP).
  bool shares_by_tp = false;
  // `auto` takes the registered strategy of lowest `auto_order` whose rule takes the facts
  // (the layout, graphs, whether the groups read one copy); unset: never chosen by `auto`.
  std::function<bool(const ExchangeFacts&)> chosen_by_auto;
  int auto_order = 0;
  // Whether the ranks of an ETP group on one node read each other's rows in place instead of
  // exchanging them: the engine then gives every store the node's balanced part of each table
  // (the whole table on one node), held once by the node's ranks of the group, each filling
  // its part, and opens no communicator where the group is on one node (the factory makes a
  // LocalExchange there, an exchange between the nodes otherwise).
  bool reads_peers = false;
  std::string auto_help;  // where `auto` takes it, for `--help` ("where ..."); empty: otherwise
  // The exchange over a context; in a group of one rank every strategy is the identity,
  // which its factory may build as the gather-reduce flow without a combine
  // (make_identity_exchange).
  std::function<std::unique_ptr<Exchange>(const ExchangeContext&)> make;
};

// Registers a strategy: InputError where its name is taken or it has no name, groups or
// factory. For strategies built outside the library, at static initialization or before the
// first engine.
ExchangeStrategy register_exchange_strategy(StrategyDescriptor descriptor);
// SystemError for automatic or an id not registered.
[[nodiscard]] const StrategyDescriptor& descriptor_of(ExchangeStrategy strategy);
// Every registered strategy, in registration order (automatic not among them).
[[nodiscard]] std::vector<ExchangeStrategy> registered_strategies();
// "auto" and every registered name, in that order: the values `--exchange` takes.
[[nodiscard]] std::vector<std::string> exchange_strategy_names();
// Those names, comma-separated ("auto, gather-reduce, ...").
[[nodiscard]] std::string exchange_strategy_list();
// Every strategy with its help, then auto's rule: `--exchange`'s help.
[[nodiscard]] std::string exchange_strategy_help();

// The groups every strategy that combines partial rows uses: the ETP group's slots gathered
// (etp_dp), combined over the group (etp), or over TP under sequence parallelism.
[[nodiscard]] std::vector<ExchangeGroup> slot_groups(const Topology& topology);
// The gather-reduce flow named `name`: every rank looks up the group's slots and one
// all-reduce combines them (a reduce-scatter over TP under sequence parallelism, or where
// `scatter` asks for one over the group); with one rank in the group, the identity.
[[nodiscard]] std::unique_ptr<Exchange> make_slot_exchange(const ExchangeContext& context, const char* name,
                                                           bool scatter = false);

// The built-in strategies' descriptors, each in its strategy's file.
[[nodiscard]] StrategyDescriptor gather_reduce_strategy();
[[nodiscard]] StrategyDescriptor reduce_scatter_strategy();
[[nodiscard]] StrategyDescriptor owner_strategy();
[[nodiscard]] StrategyDescriptor hierarchical_strategy();
[[nodiscard]] StrategyDescriptor peer_read_strategy();

}  // namespace pleshard
