#pragma once
// A CUDA graph recorded from the work one function enqueues on a stream (RAII). Built only
// with CUDA.

#include <functional>
#include <optional>

#include <cuda_runtime_api.h>

#include "kernels/cuda/pinned_pull.hpp"

namespace pleshard {

class CudaGraph {
 public:
  // Records what `work` enqueues on `stream` (nothing runs) and instantiates it. Buffers
  // the work uses must be allocated before.
  CudaGraph(cudaStream_t stream, const std::function<void()>& work);
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Where the work pulled a block from pinned memory (StepSpace::copy_from_pinned), this
  // launch pulls `pulled` (of the captured length, its own runs of data and padding) from
  // `pulled_from` instead: the graph serves every buffer. A graph with a pull needs the
  // buffer named, one without refuses one (SystemError).
  void launch(cudaStream_t stream, const void* pulled_from = nullptr, const kernels::PaddedBlock& pulled = {});
  // Whether the work pulled a block from pinned memory.
  [[nodiscard]] bool pulls() const { return pull_.has_value(); }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::optional<kernels::CapturedPull> pull_;
};

}  // namespace pleshard
