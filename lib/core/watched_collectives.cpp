#include "core/watched_collectives.hpp"

#include "core/mpi_check.hpp"
#include "core/watched_wait.hpp"

namespace pleshard {

namespace {

// Starts a non-blocking collective (`start` makes its request) and completes it, watched.
template <typename Start>
void watched(const std::string& what, Start start) {
  MPI_Request request = MPI_REQUEST_NULL;
  start(&request);
  wait_watched(request, what);
}

}  // namespace

void watched_barrier(MPI_Comm comm, const std::string& what) {
  watched(what, [&](MPI_Request* request) { PLESHARD_MPI_CHECK(MPI_Ibarrier(comm, request)); });
}

void watched_bcast(void* data, int count, MPI_Datatype type, int root, MPI_Comm comm, const std::string& what) {
  watched(what, [&](MPI_Request* request) { PLESHARD_MPI_CHECK(MPI_Ibcast(data, count, type, root, comm, request)); });
}

void watched_allreduce(void* data, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, const std::string& what) {
  watched(what, [&](MPI_Request* request) {
    PLESHARD_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, data, count, type, op, comm, request));
  });
}

void watched_reduce(const void* mine, void* result, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                    const std::string& what) {
  watched(what, [&](MPI_Request* request) {
    PLESHARD_MPI_CHECK(MPI_Ireduce(mine, result, count, type, op, root, comm, request));
  });
}

void watched_allgather(const void* mine, void* all, int count, MPI_Datatype type, MPI_Comm comm,
                       const std::string& what) {
  watched(what, [&](MPI_Request* request) {
    PLESHARD_MPI_CHECK(MPI_Iallgather(mine, count, type, all, count, type, comm, request));
  });
}

void watched_gather(const void* mine, void* all, int count, MPI_Datatype type, int root, MPI_Comm comm,
                    const std::string& what) {
  watched(what, [&](MPI_Request* request) {
    PLESHARD_MPI_CHECK(MPI_Igather(mine, count, type, all, count, type, root, comm, request));
  });
}

void watched_gatherv(const void* mine, int count, void* all, const int* counts, const int* offsets, MPI_Datatype type,
                     int root, MPI_Comm comm, const std::string& what) {
  watched(what, [&](MPI_Request* request) {
    PLESHARD_MPI_CHECK(MPI_Igatherv(mine, count, type, all, counts, offsets, type, root, comm, request));
  });
}

MPI_Comm watched_dup(MPI_Comm comm, const std::string& what) {
  MPI_Comm dup = MPI_COMM_NULL;
  watched(what, [&](MPI_Request* request) { PLESHARD_MPI_CHECK(MPI_Comm_idup(comm, &dup, request)); });
  return dup;
}

MPI_Comm watched_split(MPI_Comm comm, int color, int key, const std::string& what) {
  watched_barrier(comm, what);
  MPI_Comm split = MPI_COMM_NULL;
  PLESHARD_MPI_CHECK(MPI_Comm_split(comm, color, key, &split));
  return split;
}

MPI_Comm watched_split_shared(MPI_Comm comm, int key, const std::string& what) {
  watched_barrier(comm, what);
  MPI_Comm node = MPI_COMM_NULL;
  PLESHARD_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, &node));
  return node;
}

}  // namespace pleshard
