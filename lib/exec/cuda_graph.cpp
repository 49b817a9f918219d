#include "exec/cuda_graph.hpp"

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.hpp"

namespace pleshard {

CudaGraph::CudaGraph(cudaStream_t stream, const std::function<void()>& work) {
  // Relaxed: NCCL's enqueue path may call runtime functions that other modes forbid.
  PLESHARD_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  try {
    work();
  } catch (...) {
    cudaGraph_t broken = nullptr;
    cudaStreamEndCapture(stream, &broken);
    if (broken != nullptr) cudaGraphDestroy(broken);
    throw;
  }
  PLESHARD_CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
  try {
    pull_ = kernels::find_pull(graph_);
  } catch (...) {
    cudaGraphDestroy(graph_);
    throw;
  }
  const cudaError_t rc = cudaGraphInstantiate(&exec_, graph_, 0);
  if (rc != cudaSuccess) {
    cudaGraphDestroy(graph_);
    PLESHARD_CUDA_CHECK(rc);
  }
}

CudaGraph::~CudaGraph() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) cudaGraphDestroy(graph_);
}

void CudaGraph::launch(cudaStream_t stream, const void* pulled_from, const kernels::PaddedBlock& pulled) {
  if (pull_) {
    if (pulled_from == nullptr) throw SystemError("CudaGraph: a graph that pulls from pinned memory needs its buffer");
    kernels::retarget_pull(*pull_, exec_, pulled_from, pulled);
  } else if (pulled_from != nullptr) {
    // It would replay whatever its capture read (an empty block: no pull captured).
    throw SystemError("CudaGraph: a buffer to pull from for a graph that captured no pull");
  }
  PLESHARD_CUDA_CHECK(cudaGraphLaunch(exec_, stream));
}

}  // namespace pleshard
