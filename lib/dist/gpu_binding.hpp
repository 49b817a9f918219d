#pragma once
// Which GPU each rank drives (STYLE: node-local rank from MPI_Comm_split_type, every GPU of
// the node left visible). Built only with CUDA.

#include <mpi.h>

namespace pleshard {

// Sets this rank's current device to its node-local rank modulo the node's GPUs. Collective
// over `world`; returns, on every rank alike, whether every rank has a GPU of its own (then
// NCCL can carry the exchange; otherwise ranks share GPUs and MPI carries it).
[[nodiscard]] bool bind_local_gpu(MPI_Comm world);

}  // namespace pleshard
