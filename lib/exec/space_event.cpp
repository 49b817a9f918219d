#include "exec/space_event.hpp"

#include <chrono>

#if PLESHARD_HAVE_CUDA
#include "kernels/cuda/cuda_check.hpp"
#endif

namespace pleshard {

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

SpaceEvent::SpaceEvent(const StepSpace& space) : stream_(space.stream()) {
#if PLESHARD_HAVE_CUDA
  if (space.on_device()) {
    cudaEvent_t event = nullptr;
    PLESHARD_CUDA_CHECK(cudaEventCreate(&event));
    event_ = event;
  }
#endif
}

SpaceEvent::~SpaceEvent() {
#if PLESHARD_HAVE_CUDA
  if (event_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(event_));
#endif
}

void SpaceEvent::record() {
#if PLESHARD_HAVE_CUDA
  if (event_ != nullptr) {
    PLESHARD_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event_), static_cast<cudaStream_t>(stream_)));
    return;
  }
#endif
  host_seconds_ = now();
}

bool SpaceEvent::done() const {
#if PLESHARD_HAVE_CUDA
  if (event_ != nullptr) {
    const cudaError_t state = cudaEventQuery(static_cast<cudaEvent_t>(event_));
    if (state == cudaErrorNotReady) return false;
    PLESHARD_CUDA_CHECK(state);
  }
#endif
  return true;
}

double SpaceEvent::seconds_since(const SpaceEvent& earlier) const {
#if PLESHARD_HAVE_CUDA
  if (event_ != nullptr) {
    float ms = 0;
    PLESHARD_CUDA_CHECK(
        cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(earlier.event_), static_cast<cudaEvent_t>(event_)));
    return ms * 1e-3;
  }
#endif
  return host_seconds_ - earlier.host_seconds_;
}

}  // namespace pleshard
