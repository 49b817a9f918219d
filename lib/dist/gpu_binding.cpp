#include "dist/gpu_binding.hpp"

#include "core/error.hpp"
#include "core/mpi_check.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device.hpp"

namespace pleshard {

bool bind_local_gpu(const Communicators& comms) {
  int local_ranks = 1;
  PLESHARD_MPI_CHECK(MPI_Comm_size(comms.node(), &local_ranks));
  const int devices = kernels::cuda_device_count();
  if (devices == 0) throw SystemError("bind_local_gpu: no CUDA device on this node");
  PLESHARD_CUDA_CHECK(cudaSetDevice(comms.node_rank() % devices));
  int own = local_ranks <= devices ? 1 : 0;
  PLESHARD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &own, 1, MPI_INT, MPI_MIN, comms.world()));
  return own == 1;
}

}  // namespace pleshard
