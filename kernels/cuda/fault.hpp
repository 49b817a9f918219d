#pragma once
// Fault injection for tests: a kernel that runs on for 30 s, standing in for a GPU or a peer
// that stalls, and one that sleeps a while, standing in for slow work. Built only with CUDA.

#include <cuda_runtime_api.h>

namespace pleshard::kernels {

// Enqueues a kernel that spins for 30 s.
void stall_stream_cuda(cudaStream_t stream);
// Enqueues a kernel that sleeps for `seconds`.
void delay_stream_cuda(cudaStream_t stream, double seconds);

}  // namespace pleshard::kernels
