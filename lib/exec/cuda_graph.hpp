#pragma once
// A CUDA graph recorded from the work one function enqueues on a stream (RAII). Built only
// with CUDA.

#include <functional>

#include <cuda_runtime_api.h>

namespace pleshard {

class CudaGraph {
 public:
  // Records what `work` enqueues on `stream` (nothing runs) and instantiates it. Buffers
  // the work uses must be allocated before.
  CudaGraph(cudaStream_t stream, const std::function<void()>& work);
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  void launch(cudaStream_t stream);

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace pleshard
