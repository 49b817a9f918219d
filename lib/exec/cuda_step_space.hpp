#pragma once
// The CUDA stream of a GPU step space, for code that launches on it directly. Built only
// with CUDA.

#include <cuda_runtime_api.h>

#include "core/error.hpp"
#include "exec/step_space.hpp"

namespace pleshard {

// The stream of a space made by make_cuda_space(); throws SystemError for the host space.
[[nodiscard]] inline cudaStream_t stream_of(const StepSpace& space) {
  if (!space.on_device()) throw SystemError("stream_of: the host step space has no CUDA stream");
  return static_cast<cudaStream_t>(space.stream());
}

}  // namespace pleshard
