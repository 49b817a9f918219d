#include "dist/communicator_factory.hpp"

#include <string>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "dist/staged_communicator.hpp"
#if PLESHARD_HAVE_NCCL
#include "dist/nccl_communicator.hpp"
#include "exec/cuda_step_space.hpp"
#endif

namespace pleshard {

namespace {

constexpr EnumNames<CollectiveBackend, 3> k_backends{{{CollectiveBackend::mpi, "mpi"},
                                                      {CollectiveBackend::mpi_staged, "mpi-staged"},
                                                      {CollectiveBackend::nccl, "nccl"}}};

}  // namespace

const char* to_string(CollectiveBackend backend) { return name_of(k_backends, backend); }

CollectiveBackend parse_collective_backend(std::string_view name) {
  return parse_value(k_backends, name, "collective backend");
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
    case CollectiveBackend::mpi:
      return std::make_unique<MpiCommunicator>(comm);
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
