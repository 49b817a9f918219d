#pragma once
// Ordering between the step space's stream and a consumer's, on the GPU (no host wait), for
// consumers that name their stream as DLPack and __cuda_array_interface__ do: a
// cudaStream_t's value, with 1 the legacy default stream and 2 the per-thread one
// (cudaStreamLegacy, cudaStreamPerThread). Without CUDA there is nothing to order.

#include <cstddef>

namespace pleshard {

// `stream` waits for `event` (a cudaEvent_t); null `event`: nothing to wait for.
void stream_wait_event(void* stream, void* event);

// A CUDA event of its own that orders one stream after the work enqueued on another so far;
// reusable at once (a wait takes the event's state when it is enqueued).
class StreamFence {
 public:
  StreamFence();
  ~StreamFence();
  StreamFence(const StreamFence&) = delete;
  StreamFence& operator=(const StreamFence&) = delete;
  // `waiter`'s later work starts after the work enqueued on `after` by now.
  void order(void* waiter, void* after);

 private:
  void* event_ = nullptr;
};

// Copies `bytes` of GPU memory to the host, after the work on the legacy default stream
// (which a producer that exports for stream 1 has ordered its own work before).
void copy_gpu_to_host(void* host, const void* device, std::size_t bytes);

}  // namespace pleshard
