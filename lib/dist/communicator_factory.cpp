#include "dist/communicator_factory.hpp"

#include <string>

#include "core/error.hpp"
#include "dist/staged_communicator.hpp"
#if PLESHARD_HAVE_NCCL
#include "dist/nccl_communicator.hpp"
#include "exec/cuda_step_space.hpp"
#endif

namespace pleshard {

const char* to_string(CollectiveBackend backend) {
  switch (backend) {
    case CollectiveBackend::mpi: return "mpi";
    case CollectiveBackend::mpi_staged: return "mpi-staged";
    case CollectiveBackend::nccl: return "nccl";
  }
  return "?";
}

CollectiveBackend parse_collective_backend(std::string_view name) {
  for (const auto b : {CollectiveBackend::mpi, CollectiveBackend::mpi_staged, CollectiveBackend::nccl})
    if (name == to_string(b)) return b;
  throw InputError("unknown collective backend '" + std::string(name) + "' (mpi, mpi-staged or nccl)");
}

bool backend_built(CollectiveBackend backend) {
#if PLESHARD_HAVE_NCCL
  (void)backend;
  return true;
#else
  return backend != CollectiveBackend::nccl;
#endif
}

std::unique_ptr<Communicator> make_communicator(CollectiveBackend backend, MPI_Comm comm, StepSpace& space) {
  if (backend != CollectiveBackend::mpi && !space.on_device())
    throw SystemError(std::string("the ") + to_string(backend) + " backend needs a GPU step space");
  switch (backend) {
    case CollectiveBackend::mpi: return std::make_unique<MpiCommunicator>(comm);
    case CollectiveBackend::mpi_staged:
      return std::make_unique<StagedCommunicator>(std::make_unique<MpiCommunicator>(comm), space);
    case CollectiveBackend::nccl:
#if PLESHARD_HAVE_NCCL
      return std::make_unique<NcclCommunicator>(comm, stream_of(space));
#else
      break;
#endif
  }
  throw SystemError(std::string("this build has no ") + to_string(backend) + " backend");
}

}  // namespace pleshard
