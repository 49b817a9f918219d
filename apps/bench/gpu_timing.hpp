#pragma once
// Event-timed medians of GPU work on a stream (CUDA builds only).

#include <cuda_runtime_api.h>

#include "bench/timing.hpp"
#include "kernels/cuda/cuda_check.hpp"

namespace pleshard {

// Median seconds of `launch()` between two events on `stream`, after a warm-up, repeated as
// median_seconds does.
template <typename Launch>
double gpu_median_seconds(Launch&& launch, int min_repeats, double min_seconds, int* repeats = nullptr,
                          cudaStream_t stream = nullptr) {
  cudaEvent_t begin = nullptr;
  cudaEvent_t end = nullptr;
  PLESHARD_CUDA_CHECK(cudaEventCreate(&begin));
  PLESHARD_CUDA_CHECK(cudaEventCreate(&end));
  const double seconds = median_seconds(
      [&] {
        PLESHARD_CUDA_CHECK(cudaEventRecord(begin, stream));
        launch();
        PLESHARD_CUDA_CHECK(cudaEventRecord(end, stream));
        PLESHARD_CUDA_CHECK(cudaEventSynchronize(end));
        float ms = 0;
        PLESHARD_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
        return ms * 1e-3;
      },
      min_repeats, min_seconds, repeats);
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  return seconds;
}

}  // namespace pleshard
