#pragma once
// Open file descriptors handed between the ranks of a node: what a descriptor names (GPU
// memory exported by CUDA's virtual memory API, say) is reachable only through the descriptor
// itself, which no MPI message can carry. Each rank that gives one listens on a Unix socket in
// the abstract namespace (no file left behind, whatever ends the job) and sends every rank
// that connects a copy of it (SCM_RIGHTS).

#include <string>
#include <vector>

#include <mpi.h>

namespace pleshard {

// Collective over `group` (ranks of one machine, in one network namespace): every rank's
// `fd` (negative: none), each as a descriptor of this process's own, by group rank (mine is
// `fd` itself; negative where that rank gave none). The caller closes those it gets.
// InputError, agreed over the group and naming `what`, where a socket cannot be made or a
// descriptor does not come within 60 s.
[[nodiscard]] std::vector<int> share_descriptors(MPI_Comm group, int fd, const std::string& what);

}  // namespace pleshard
