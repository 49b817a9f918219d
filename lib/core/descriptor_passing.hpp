#pragma once
// An open file descriptor handed from one rank to the others of its node: what a descriptor
// names (GPU memory exported by CUDA's virtual memory API, say) is reachable only through the
// descriptor itself, which no MPI message can carry. Rank 0 of the group listens on a Unix
// socket in the abstract namespace (no file left behind, whatever ends the job) and sends each
// rank that connects a copy of the descriptor (SCM_RIGHTS).

#include <string>

#include <mpi.h>

namespace pleshard {

// Collective over `group` (ranks of one machine, in one network namespace): rank 0's `fd`
// there, a descriptor of the same open file elsewhere (the caller closes it). InputError,
// agreed over the group and naming `what`, where the socket cannot be made or a rank gets no
// descriptor within 60 s.
[[nodiscard]] int share_descriptor(MPI_Comm group, int fd, const std::string& what);

}  // namespace pleshard
