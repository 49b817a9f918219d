#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/fault.hpp"

namespace pleshard::kernels {

namespace {

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Waits for a flag nobody sets (the volatile read keeps the loop; none: no flag), for at
// most `seconds`: a stall long past any watchdog under test, yet bounded, so that the
// process can always go.
__global__ void stall_kernel(const int* flag, double seconds) {
  const unsigned long long start = global_ns();
  while ((flag == nullptr || *static_cast<const volatile int*>(flag) == 0) &&
         static_cast<double>(global_ns() - start) < seconds * 1e9)
    __nanosleep(100000);
}

}  // namespace

void stall_stream_cuda(cudaStream_t stream) {
  int* flag = nullptr;
  PLESHARD_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&flag), sizeof(int)));
  PLESHARD_CUDA_CHECK(cudaMemsetAsync(flag, 0, sizeof(int), stream));
  stall_kernel<<<1, 1, 0, stream>>>(flag, 30.0);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

void delay_stream_cuda(cudaStream_t stream, double seconds) {
  stall_kernel<<<1, 1, 0, stream>>>(nullptr, seconds);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

}  // namespace pleshard::kernels
