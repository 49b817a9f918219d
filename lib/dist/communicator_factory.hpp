#pragma once
// The collective backends by name, opened over an MPI communicator for buffers of a step
// space: the one place that knows which backends a build has and what each needs.

#include <memory>
#include <string_view>

#include <mpi.h>

#include "dist/communicator.hpp"
#include "exec/step_space.hpp"

namespace pleshard {

// mpi: host memory. mpi_staged: device memory carried by MPI through host copies (ranks
// that share a GPU, or builds without NCCL). nccl: device memory, one GPU per rank.
enum class CollectiveBackend { mpi, mpi_staged, nccl };

[[nodiscard]] const char* to_string(CollectiveBackend backend);
// "mpi", "mpi-staged" or "nccl"; anything else is an InputError naming the choices.
[[nodiscard]] CollectiveBackend parse_collective_backend(std::string_view name);
[[nodiscard]] bool backend_built(CollectiveBackend backend);

// Collective over `comm` (NCCL bootstraps over it; the caller keeps `comm` alive). `space`
// must be on the device for mpi_staged and nccl, whose calls run on its stream.
[[nodiscard]] std::unique_ptr<Communicator> make_communicator(CollectiveBackend backend, MPI_Comm comm,
                                                              StepSpace& space);

}  // namespace pleshard
