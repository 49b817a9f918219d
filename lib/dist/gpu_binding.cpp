#include "dist/gpu_binding.hpp"

#include "core/error.hpp"
#include "core/mpi_check.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device.hpp"

namespace pleshard {

bool bind_local_gpu(MPI_Comm world) {
  MPI_Comm node = MPI_COMM_NULL;
  PLESHARD_MPI_CHECK(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int local_rank = 0;
  int local_ranks = 1;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(node, &local_rank));
  PLESHARD_MPI_CHECK(MPI_Comm_size(node, &local_ranks));
  PLESHARD_MPI_CHECK(MPI_Comm_free(&node));
  const int devices = kernels::cuda_device_count();
  if (devices != 0) PLESHARD_CUDA_CHECK(cudaSetDevice(local_rank % devices));
  // Agreed, so that every rank returns or every rank throws.
  int agreed[2] = {devices != 0 ? 1 : 0, local_ranks <= devices ? 1 : 0};  // has a GPU, has its own
  PLESHARD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, agreed, 2, MPI_INT, MPI_MIN, world));
  if (agreed[0] == 0) throw SystemError("bind_local_gpu: a node of this job has no CUDA device");
  return agreed[1] == 1;
}

}  // namespace pleshard
