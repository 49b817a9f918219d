#include "kernels/cuda/pinned_pull.hpp"

#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.hpp"

namespace pleshard::kernels {

namespace {

constexpr int k_threads = 256;
constexpr std::size_t k_word = sizeof(std::uint64_t);

// A word a thread: a warp's loads coalesce into a few requests over PCIe, and every block's
// are in flight at once, so the copy is one round trip for the sizes a step's batch has.
__global__ void pull_words(const std::uint64_t* __restrict__ src, std::uint64_t* __restrict__ dst, std::int64_t words) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < words) dst[i] = src[i];
}

unsigned blocks_for(std::int64_t words) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, (words + k_threads - 1) / k_threads));
}

}  // namespace

bool pullable(const void* dst, const void* pinned, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(dst) % k_word == 0 &&
         reinterpret_cast<std::uintptr_t>(pinned) % k_word == 0 && bytes % k_word == 0;
}

void pull_pinned_cuda(void* dst, const void* pinned, std::size_t bytes, cudaStream_t stream) {
  if (!pullable(dst, pinned, bytes)) throw SystemError("pull_pinned_cuda: addresses or size not in 8-byte words");
  const auto words = static_cast<std::int64_t>(bytes / k_word);
  if (words == 0) return;
  pull_words<<<blocks_for(words), k_threads, 0, stream>>>(static_cast<const std::uint64_t*>(pinned),
                                                          static_cast<std::uint64_t*>(dst), words);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

std::optional<CapturedPull> find_pull(cudaGraph_t graph) {
  std::size_t count = 0;
  PLESHARD_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  PLESHARD_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  // A runtime launch's node names its kernel by the host stub or by its function handle.
  const void* stub = reinterpret_cast<const void*>(&pull_words);
  cudaFunction_t handle = nullptr;
  PLESHARD_CUDA_CHECK(cudaGetFuncBySymbol(&handle, stub));
  std::optional<CapturedPull> found;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    PLESHARD_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeParams params{};
    PLESHARD_CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &params));
    if (params.func != stub && params.func != static_cast<const void*>(handle)) continue;
    if (found)
      throw SystemError("a CUDA graph with two pulls from pinned memory: which one a launch points is unknown");
    // The arguments as the graph holds them: (src, dst, words).
    found = CapturedPull{node, params, *static_cast<std::uint64_t**>(params.kernelParams[1]),
                         *static_cast<std::int64_t*>(params.kernelParams[2])};
  }
  return found;
}

void retarget_pull(const CapturedPull& pull, cudaGraphExec_t exec, const void* pinned) {
  if (!pullable(pull.dst, pinned, static_cast<std::size_t>(pull.words) * k_word))
    throw SystemError("retarget_pull: the source is not in 8-byte words");
  const auto* src = static_cast<const std::uint64_t*>(pinned);
  std::uint64_t* dst = pull.dst;
  std::int64_t words = pull.words;
  void* args[] = {&src, &dst, &words};
  cudaKernelNodeParams params = pull.params;
  params.kernelParams = args;
  params.extra = nullptr;
  PLESHARD_CUDA_CHECK(cudaGraphExecKernelNodeSetParams(exec, pull.node, &params));
}

}  // namespace pleshard::kernels
