#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/fault.hpp"

namespace pleshard::kernels {

namespace {

// Waits for a flag nobody sets; the volatile read keeps the loop from being optimized away.
__global__ void stall_kernel(const int* flag) {
  while (*static_cast<const volatile int*>(flag) == 0) __nanosleep(100000);
}

}  // namespace

void stall_stream_cuda(cudaStream_t stream) {
  int* flag = nullptr;
  PLESHARD_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&flag), sizeof(int)));
  PLESHARD_CUDA_CHECK(cudaMemsetAsync(flag, 0, sizeof(int), stream));
  stall_kernel<<<1, 1, 0, stream>>>(flag);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

}  // namespace pleshard::kernels
