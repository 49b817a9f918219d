// `--exchange peer-read`: the ranks of an ETP group on one node read each other's rows in
// place, so that no step runs a collective. The group's rows of each table lie in one address
// range every rank of the group maps — one allocation on the group's GPU (device tier, CUDA
// IPC: store/device_rows.hpp), one segment of the node's memory (host and pinned tiers) —
// each rank filling its own part at load. A step is then the local lookup of a tier of whole
// tables: each rank hashes its own tokens (its sequence slice under sequence parallelism),
// decodes their rows wherever their owner put them, and ends with its embeddings. The engine
// gives the stores whole ranges and the group (EngineSession), the exchange is LocalExchange.

#include "core/option_names.hpp"
#include "engine/exchange_strategy.hpp"
#include "engine/local_exchange.hpp"

namespace pleshard {

StrategyDescriptor peer_read_strategy() {
  StrategyDescriptor d;
  d.name = "peer-read";
  d.help =
      "the ranks of an ETP group on one node read each other's rows in place, held once on their GPU or in "
      "the node's memory: no collective per step";
  d.groups = [](const Topology&) { return std::vector<ExchangeGroup>{}; };
  d.reads_peers = true;
  d.make = [](const ExchangeContext& c) -> std::unique_ptr<Exchange> {
    return std::make_unique<LocalExchange>(c, "peer-read");
  };
  return d;
}

}  // namespace pleshard
