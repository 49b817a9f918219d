#include "exec/stream_order.hpp"

#include "core/error.hpp"
#if PLESHARD_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_check.hpp"
#endif

namespace pleshard {

#if PLESHARD_HAVE_CUDA

void stream_wait_event(void* stream, void* event) {
  if (event != nullptr)
    PLESHARD_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0));
}

StreamFence::StreamFence() {
  cudaEvent_t event = nullptr;
  PLESHARD_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  event_ = event;
}

StreamFence::~StreamFence() { cudaEventDestroy(static_cast<cudaEvent_t>(event_)); }

void StreamFence::order(void* waiter, void* after) {
  PLESHARD_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event_), static_cast<cudaStream_t>(after)));
  stream_wait_event(waiter, event_);
}

void copy_gpu_to_host(void* host, const void* device, std::size_t bytes) {
  PLESHARD_CUDA_CHECK(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost));
}

#else

void stream_wait_event(void* /*stream*/, void* /*event*/) {}
StreamFence::StreamFence() = default;
StreamFence::~StreamFence() = default;
void StreamFence::order(void* /*waiter*/, void* /*after*/) {}
void copy_gpu_to_host(void* /*host*/, const void* /*device*/, std::size_t /*bytes*/) {
  throw SystemError("GPU memory given to a build without CUDA");
}

#endif

}  // namespace pleshard
