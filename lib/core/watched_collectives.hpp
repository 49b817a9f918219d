#pragma once
// The host's collectives over MPI outside the exchanges' own communicators (start-up, the
// load, agreements, the output, the end): each made non-blocking and completed through
// wait_watched, so that a peer that stops ends the job on every rank within the stall limit
// with a message naming `what` was waited for. With no limit set they are plain collectives.
//
// MPI offers no non-blocking split of a communicator: watched_split and watched_split_type
// first pass a watched barrier, so a rank stopped before the split is caught there. A rank
// stopped inside the split's own short exchange, after every rank has passed the barrier,
// is not: that window is a few messages between running processes, where a job killed from
// outside (its launcher, the batch system) still ends.

#include <string>

#include <mpi.h>

namespace pleshard {

void watched_barrier(MPI_Comm comm, const std::string& what);
void watched_bcast(void* data, int count, MPI_Datatype type, int root, MPI_Comm comm, const std::string& what);
// In place: `data` holds this rank's `count` values, then the reduction of every rank's.
void watched_allreduce(void* data, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, const std::string& what);
// `result` (significant at `root` only) receives the reduction of every rank's `mine`.
void watched_reduce(const void* mine, void* result, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                    const std::string& what);
// `all` receives `count` values of `type` from every rank, in rank order.
void watched_allgather(const void* mine, void* all, int count, MPI_Datatype type, MPI_Comm comm,
                       const std::string& what);
// As watched_allgather, onto `root` only.
void watched_gather(const void* mine, void* all, int count, MPI_Datatype type, int root, MPI_Comm comm,
                    const std::string& what);
// `root` receives counts[r] values from rank r at offsets[r] of `all`.
void watched_gatherv(const void* mine, int count, void* all, const int* counts, const int* offsets, MPI_Datatype type,
                     int root, MPI_Comm comm, const std::string& what);

// A duplicate of `comm` (MPI_Comm_idup, watched).
[[nodiscard]] MPI_Comm watched_dup(MPI_Comm comm, const std::string& what);
// MPI_Comm_split after a watched barrier.
[[nodiscard]] MPI_Comm watched_split(MPI_Comm comm, int color, int key, const std::string& what);
// The ranks of `comm` that share memory with this one (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)),
// after a watched barrier.
[[nodiscard]] MPI_Comm watched_split_shared(MPI_Comm comm, int key, const std::string& what);

}  // namespace pleshard
