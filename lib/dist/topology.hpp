#pragma once
// The parallel layout (docs/design.md §5): world = DP x TP ranks, rank = dp * TP + tp. The
// embedding-parallel group ETP holds the TP ranks of Edp consecutive DP ranks (E = TP * Edp,
// Edp divides DP); each ETP rank owns one balanced, contiguous range of every table.

#include <cstdint>
#include <string>

#include <mpi.h>

namespace pleshard {

struct Topology {
  int world = 1;
  int tp = 1;   // TP size
  int etp = 1;  // ETP size E
  int rank = 0;

  [[nodiscard]] int dp() const { return world / tp; }  // DP size
  [[nodiscard]] int edp() const { return etp / tp; }   // DP ranks per ETP group
  [[nodiscard]] int dp_rank() const { return rank / tp; }
  [[nodiscard]] int tp_rank() const { return rank % tp; }
  [[nodiscard]] int etp_group() const { return dp_rank() / edp(); }
  [[nodiscard]] int etp_rank() const { return (dp_rank() % edp()) * tp + tp_rank(); }
  [[nodiscard]] int etp_dp_rank() const { return dp_rank() % edp(); }  // slot in the group
  // Sequence parallelism: the ETP group is one DP rank's TP group (E = TP).
  [[nodiscard]] bool sequence_parallel() const { return etp == tp; }

  // The layout in words, as the run report's first line gives it:
  // "ranks 8 (DP 4 x TP 2), ETP group 4 (2 DP ranks x TP 2)".
  [[nodiscard]] std::string describe() const;
  // The ETP group alone, its size and what it holds: "4 (2 DP ranks x TP 2)".
  [[nodiscard]] std::string describe_etp() const;
};

// Validates --tp / --etp against the world size; throws InputError with one clear line.
// etp = 0 means "TP" (the smallest ETP group).
[[nodiscard]] Topology make_topology(int world, int rank, int tp, int etp);

// PLESHARD_RANKS_PER_NODE: nodes of that many consecutive world ranks instead of MPI's
// shared-memory domains (the multi-node path on one machine); 0 when unset. InputError
// when it is not a positive number.
[[nodiscard]] int ranks_per_node_override();

// Owns the communicators of a layout, duplicated from the caller's; freed in reverse.
class Communicators {
 public:
  Communicators(MPI_Comm parent, const Topology& topology);
  ~Communicators();
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;

  [[nodiscard]] const Topology& topology() const { return topology_; }
  [[nodiscard]] MPI_Comm world() const { return world_; }
  [[nodiscard]] MPI_Comm tp() const { return tp_; }          // TP ranks of my DP rank
  [[nodiscard]] MPI_Comm dp() const { return dp_; }          // DP ranks with my TP rank
  [[nodiscard]] MPI_Comm etp() const { return etp_; }        // my ETP group
  [[nodiscard]] MPI_Comm etp_dp() const { return etp_dp_; }  // my ETP group's ranks with my TP rank
  [[nodiscard]] MPI_Comm node() const { return node_; }      // ranks on my node
  [[nodiscard]] int node_rank() const { return node_rank_; }
  // My ETP group's ranks on my node (in ETP order), and its ranks of my rank within the
  // node, one per node (in node order): the hierarchical exchange's two levels. Nodes are
  // MPI's shared-memory domains, or blocks of PLESHARD_RANKS_PER_NODE world ranks.
  [[nodiscard]] MPI_Comm etp_node() const { return etp_node_; }
  [[nodiscard]] MPI_Comm etp_cross() const { return etp_cross_; }

 private:
  Topology topology_;
  MPI_Comm world_ = MPI_COMM_NULL;
  MPI_Comm tp_ = MPI_COMM_NULL;
  MPI_Comm dp_ = MPI_COMM_NULL;
  MPI_Comm etp_ = MPI_COMM_NULL;
  MPI_Comm etp_dp_ = MPI_COMM_NULL;
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Comm etp_node_ = MPI_COMM_NULL;
  MPI_Comm etp_cross_ = MPI_COMM_NULL;
  int node_rank_ = 0;
};

}  // namespace pleshard
