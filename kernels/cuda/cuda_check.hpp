#pragma once
// PLESHARD_CUDA_CHECK(call) and PLESHARD_CUDA_CHECK_LAUNCH(): throw SystemError with the
// CUDA error string and the call site.

#include <cuda_runtime_api.h>

#include "core/error.hpp"

namespace pleshard::detail {
[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);
}  // namespace pleshard::detail

#define PLESHARD_CUDA_CHECK(call)                                                         \
  do {                                                                                    \
    const cudaError_t pleshard_cuda_rc_ = (call);                                         \
    if (pleshard_cuda_rc_ != cudaSuccess)                                                 \
      ::pleshard::detail::throw_cuda_error(pleshard_cuda_rc_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: reports launch-configuration errors at the launch site.
#define PLESHARD_CUDA_CHECK_LAUNCH() PLESHARD_CUDA_CHECK(cudaGetLastError())
