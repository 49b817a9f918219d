#include "engine/exchange_groups.hpp"

#include "core/mpi_check.hpp"
#include "engine/exchange_strategy.hpp"

namespace pleshard {

namespace {

struct GroupInfo {
  const char* name;
  bool host;                                // MPI on host memory, whatever the backend
  MPI_Comm (Communicators::*comm)() const;  // the ranks it spans
};

constexpr std::array<GroupInfo, k_exchange_groups> k_groups{{
    {"etp", false, &Communicators::etp},
    {"etp_dp", false, &Communicators::etp_dp},
    {"tp", false, &Communicators::tp},
    {"etp host", true, &Communicators::etp},
    {"etp_node", false, &Communicators::etp_node},
    {"etp_node host", true, &Communicators::etp_node},
    {"etp_cross", false, &Communicators::etp_cross},
    {"etp_cross host", true, &Communicators::etp_cross},
}};

int size_of(MPI_Comm comm) {
  int size = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_size(comm, &size));
  return size;
}

}  // namespace

std::vector<ExchangeGroup> groups_for(ExchangeStrategy strategy, const Topology& topology) {
  if (strategy == ExchangeStrategy::automatic) return slot_groups(topology);  // exchanges nothing (local)
  return descriptor_of(strategy).groups(topology);
}

ExchangeGroups::ExchangeGroups(const Communicators& comms, std::span<const ExchangeGroup> groups,
                               CollectiveBackend backend, StepSpace& space) {
  for (const ExchangeGroup group : groups) {
    const GroupInfo& info = k_groups[static_cast<std::size_t>(group)];
    const MPI_Comm comm = (comms.*info.comm)();
    if (size_of(comm) < 2) continue;
    comms_[static_cast<std::size_t>(group)] =
        info.host ? std::make_unique<MpiCommunicator>(comm) : make_communicator(backend, comm, space);
  }
}

ExchangeComms ExchangeGroups::view() const {
  using G = ExchangeGroup;
  return {get(G::etp),      get(G::etp_dp),        get(G::tp),        get(G::etp_host),
          get(G::etp_node), get(G::etp_node_host), get(G::etp_cross), get(G::etp_cross_host)};
}

std::vector<Communicator*> ExchangeGroups::on_space() const {
  std::vector<Communicator*> out;
  for (std::size_t g = 0; g < k_exchange_groups; ++g)
    if (comms_[g] != nullptr && !k_groups[g].host) out.push_back(comms_[g].get());
  return out;
}

std::vector<std::pair<std::string, const Communicator*>> ExchangeGroups::named() const {
  std::vector<std::pair<std::string, const Communicator*>> out;
  for (std::size_t g = 0; g < k_exchange_groups; ++g)
    if (comms_[g] != nullptr) out.emplace_back(k_groups[g].name, comms_[g].get());
  return out;
}

}  // namespace pleshard
