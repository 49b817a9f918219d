#pragma once
// Fault injection for tests: a kernel that runs on for 30 s, standing in for a GPU or a peer
// that stalls. Built only with CUDA.

#include <cuda_runtime_api.h>

namespace pleshard::kernels {

// Enqueues a kernel that spins for 30 s.
void stall_stream_cuda(cudaStream_t stream);

}  // namespace pleshard::kernels
