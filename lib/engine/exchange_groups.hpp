#pragma once
// The communicators a step's exchange uses. Each strategy declares the groups it needs
// (groups_for); the engine opens them once, for the backend its tier and GPUs allow, and
// asks this one object for the view an exchange takes, the ones a watched wait checks and
// a CUDA graph captures, and their names for the report.

#include <array>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dist/communicator.hpp"
#include "dist/communicator_factory.hpp"
#include "dist/topology.hpp"
#include "engine/exchange.hpp"

namespace pleshard {

// A group and the memory its messages are in: the step space's (the backend's) or the
// host's (MPI; message sizes and ids the owner strategies plan with).
enum class ExchangeGroup { etp, etp_dp, tp, etp_host, etp_node, etp_node_host, etp_cross, etp_cross_host };
inline constexpr std::size_t k_exchange_groups = 8;

// The groups `strategy` uses under `topology`, as its descriptor declares them
// (engine/exchange_strategy.hpp).
[[nodiscard]] std::vector<ExchangeGroup> groups_for(ExchangeStrategy strategy, const Topology& topology);

class ExchangeGroups {
 public:
  ExchangeGroups() = default;  // none: nothing is exchanged
  // Opens each of `groups` of more than one rank (a group of one needs no communicator).
  ExchangeGroups(const Communicators& comms, std::span<const ExchangeGroup> groups, CollectiveBackend backend,
                 StepSpace& space);

  [[nodiscard]] Communicator* get(ExchangeGroup group) const { return comms_[static_cast<std::size_t>(group)].get(); }
  [[nodiscard]] ExchangeComms view() const;
  // Those on step-space memory: what a step's collectives run on, what a watched wait
  // checks and aborts, and what a CUDA graph captures.
  [[nodiscard]] std::vector<Communicator*> on_space() const;
  // Every open one with its name ("etp", "etp host", ...).
  [[nodiscard]] std::vector<std::pair<std::string, const Communicator*>> named() const;

 private:
  std::array<std::unique_ptr<Communicator>, k_exchange_groups> comms_;
};

}  // namespace pleshard
