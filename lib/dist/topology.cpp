#include "dist/topology.hpp"

#include <cstdlib>
#include <exception>
#include <string>

#include "core/error.hpp"
#include "core/mpi_check.hpp"
#include "core/option_names.hpp"
#include "core/watched_collectives.hpp"

namespace pleshard {

std::string Topology::describe() const {
  return "ranks " + std::to_string(world) + " (DP " + std::to_string(dp()) + " x TP " + std::to_string(tp) +
         "), ETP group " + describe_etp();
}

std::string Topology::describe_etp() const {
  return std::to_string(etp) + " (" + std::to_string(edp()) + (edp() == 1 ? " DP rank" : " DP ranks") + " x TP " +
         std::to_string(tp) + ")";
}

Topology make_topology(int world, int rank, int tp, int etp) {
  if (etp == 0) etp = tp;
  const std::string tp_name = option_name(Option::tp);
  const std::string etp_name = option_name(Option::etp);
  const std::string layout = "layout " + option_is(Option::tp, tp) + " " + option_is(Option::etp, etp) + " on " +
                             std::to_string(world) + " ranks: ";
  if (tp < 1 || etp < 1) throw InputError(layout + tp_name + " and " + etp_name + " must be >= 1");
  if (world % tp != 0) throw InputError(layout + tp_name + " must divide the number of ranks");
  if (etp % tp != 0) throw InputError(layout + etp_name + " must be a multiple of " + tp_name);
  if ((world / tp) % (etp / tp) != 0)
    throw InputError(layout + etp_name + " / " + tp_name + " = " + std::to_string(etp / tp) +
                     " must divide DP = " + std::to_string(world / tp));
  return {world, tp, etp, rank};
}

Communicators::Communicators(MPI_Comm parent, const Topology& t) : topology_(t) {
  const std::string what = "the job's communicators";
  world_ = watched_dup(parent, what);
  tp_ = watched_split(world_, t.dp_rank(), t.tp_rank(), what);
  dp_ = watched_split(world_, t.tp_rank(), t.dp_rank(), what);
  etp_ = watched_split(world_, t.etp_group(), t.etp_rank(), what);
  etp_dp_ = watched_split(world_, t.etp_group() * t.tp + t.tp_rank(), t.etp_dp_rank(), what);
  node_ = watched_split_shared(world_, t.rank, what);
  PLESHARD_MPI_CHECK(MPI_Comm_rank(node_, &node_rank_));
  // My node: its first world rank, or (tests on one machine) blocks of the override.
  int node = 0;
  int per_node = 0;
  try {
    per_node = ranks_per_node_override();
  } catch (const InputError&) {
    // Refused, on every rank, where the hierarchical exchange is asked for (the only one
    // that uses the split); the other strategies need no node layout.
  }
  if (per_node > 0) {
    node = t.rank / per_node;
  } else {
    node = t.rank;
    watched_allreduce(&node, 1, MPI_INT, MPI_MIN, node_, what);
  }
  etp_node_ = watched_split(etp_, node, t.etp_rank(), what);
  int local = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(etp_node_, &local));
  etp_cross_ = watched_split(etp_, local, t.etp_rank(), what);
}

int ranks_per_node_override() {
  const char* text = std::getenv("PLESHARD_RANKS_PER_NODE");
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 1 || value > (1 << 20))
    throw InputError("PLESHARD_RANKS_PER_NODE=" + quoted_value(text) + ": expected a positive number of ranks");
  return static_cast<int>(value);
}

Communicators::~Communicators() {
  // Freeing may synchronise with the other ranks; a rank unwinding alone from a failure
  // leaves them (its process is ending).
  if (std::uncaught_exceptions() > 0) return;
  for (MPI_Comm* c : {&etp_cross_, &etp_node_, &node_, &etp_dp_, &etp_, &dp_, &tp_, &world_})
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
}

}  // namespace pleshard
