// `--exchange peer-read`: the ranks of an ETP group on one node read each other's rows in
// place, so that no step runs a collective. The group's rows of each table lie in one address
// range every rank of the group maps — a part of its pages on each rank's GPU (device tier,
// CUDA's virtual memory API: store/device_rows.hpp), one segment of the node's memory (host
// and pinned tiers) — each rank filling its own part at load. A step is then the local
// lookup of a tier of whole tables: each rank hashes its own tokens (its sequence slice under
// sequence parallelism), decodes their rows wherever their owner put them, and ends with its
// embeddings. The engine gives the stores whole ranges and the group (EngineSession), the
// exchange is LocalExchange.
// An ETP group over several nodes (node-major blocks of one size) splits every table into
// the nodes' balanced parts, each held once by its node's ranks as above, and exchanges rows
// between nodes only: a rank's ids go to the rank of its local index on their owner's node
// (the owner exchange over `etp_cross`), which reads them from its node's copy.

#include "engine/exchange_strategy.hpp"
#include "engine/local_exchange.hpp"
#include "engine/owner_exchange.hpp"

namespace pleshard {

StrategyDescriptor peer_read_strategy() {
  StrategyDescriptor d;
  d.name = "peer-read";
  d.help =
      "the ranks of an ETP group on one node read each other's rows in place, held once in their GPUs' or the "
      "node's memory: no collective per step";
  // Across nodes, the owner exchange between them: a rank asks the rank of its local index
  // on each other node, which holds that node's rows as mine holds my node's.
  d.groups = [](const Topology& t) {
    std::vector<ExchangeGroup> groups = owner_strategy().groups(t);
    groups.insert(groups.end(), {ExchangeGroup::etp_cross, ExchangeGroup::etp_cross_host});
    return groups;
  };
  d.needs_node_layout = true;
  d.reads_peers = true;
  // Measured faster than every exchange where the ranks of a group share one GPU (device
  // tier) or host memory (host tier): docs/performance.md. Ranks of several GPUs reading
  // over peer links are not measured yet, so not chosen.
  d.chosen_by_auto = [](const ExchangeFacts& f) { return f.topology.etp > 1 && f.groups_read_one_copy; };
  d.auto_order = -1;
  d.auto_help =
      "where each ETP group of several ranks is on one node, its ranks on one GPU with every table on the device "
      "tier or with every table on the host tier";
  d.make = [](const ExchangeContext& c) -> std::unique_ptr<Exchange> {
    if (c.comms.etp_cross == nullptr) return std::make_unique<LocalExchange>(c, "peer-read");  // one node
    return std::make_unique<OwnerExchange>(c, OwnerGroup::of(c.comms.etp_cross, c.comms.etp_cross_host), "peer-read");
  };
  return d;
}

}  // namespace pleshard
