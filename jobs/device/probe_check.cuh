#pragma once
// The probes' one check: a failed CUDA runtime call prints its line and ends the probe.

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                      \
  do {                                                                \
    const cudaError_t rc = (x);                                       \
    if (rc != cudaSuccess) {                                          \
      std::printf("line %d: %s\n", __LINE__, cudaGetErrorString(rc)); \
      std::exit(1);                                                   \
    }                                                                 \
  } while (0)
