#pragma once
// The CUDA step space's stream, for code that launches on it directly (the GPU tiers and
// the NCCL communicator).

#include <cuda_runtime_api.h>

#include "exec/step_space.hpp"

namespace pleshard {

// The stream of a space made by make_cuda_space(); throws SystemError for other spaces.
[[nodiscard]] cudaStream_t stream_of(const StepSpace& space);

}  // namespace pleshard
