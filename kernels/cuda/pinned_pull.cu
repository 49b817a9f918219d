#include "kernels/cuda/pinned_pull.hpp"

#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.hpp"

namespace pleshard::kernels {

namespace {

constexpr int k_threads = 256;
constexpr std::size_t k_word = sizeof(std::uint64_t);

// A word a thread: a warp's loads coalesce into a few requests over PCIe, and every block's
// are in flight at once, so the copy is one round trip for the sizes a step's batch has.
// Padding is written from the block's description, never read.
__global__ void pull_words(const std::uint64_t* __restrict__ src, std::uint64_t* __restrict__ dst,
                           const PaddedBlock block) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < block.total_words()) dst[i] = block.word(src, i);
}

void check_block(const PaddedBlock& block, const char* who) {
  if (!block.valid()) throw SystemError(std::string(who) + ": a block of malformed runs");
}

}  // namespace

bool pullable(const void* dst, const void* pinned) {
  return reinterpret_cast<std::uintptr_t>(dst) % k_word == 0 && reinterpret_cast<std::uintptr_t>(pinned) % k_word == 0;
}

void pull_pinned_cuda(void* dst, const void* pinned, const PaddedBlock& block, cudaStream_t stream) {
  if (!pullable(dst, pinned)) throw SystemError("pull_pinned_cuda: addresses not in 8-byte words");
  check_block(block, "pull_pinned_cuda");
  const std::int64_t words = block.total_words();
  if (words == 0) return;
  const auto blocks = static_cast<unsigned>((words + k_threads - 1) / k_threads);
  pull_words<<<blocks, k_threads, 0, stream>>>(static_cast<const std::uint64_t*>(pinned),
                                               static_cast<std::uint64_t*>(dst), block);
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
    if (cudaGraphKernelNodeGetParams(node, &params) != cudaSuccess) {
      // A kernel this runtime cannot describe (another library's, launched through the
      // driver: NCCL's in a step's graph) is not the pull; the error is not sticky.
      (void)cudaGetLastError();
      continue;
    }
    if (params.func != stub && params.func != static_cast<const void*>(handle)) continue;
    if (found)
      throw SystemError("a CUDA graph with two pulls from pinned memory: which one a launch points is unknown");
    // The arguments as the graph holds them: (src, dst, block); a relaunch passes its own.
    found = CapturedPull{node, params, *static_cast<std::uint64_t**>(params.kernelParams[1]),
                         static_cast<const PaddedBlock*>(params.kernelParams[2])->total_words()};
    found->params.kernelParams = nullptr;
    found->params.extra = nullptr;
  }
  return found;
}

void retarget_pull(const CapturedPull& pull, cudaGraphExec_t exec, const void* pinned, const PaddedBlock& block) {
  check_block(block, "retarget_pull");
  if (!pullable(pull.dst, pinned)) throw SystemError("retarget_pull: the source is not in 8-byte words");
  if (block.total_words() != pull.words)
    throw SystemError("retarget_pull: a block of " + std::to_string(block.total_words()) + " words for a graph of " +
                      std::to_string(pull.words));
  const auto* src = static_cast<const std::uint64_t*>(pinned);
  std::uint64_t* dst = pull.dst;
  PaddedBlock runs = block;
  void* args[] = {&src, &dst, &runs};
  cudaKernelNodeParams params = pull.params;
  params.kernelParams = args;
  PLESHARD_CUDA_CHECK(cudaGraphExecKernelNodeSetParams(exec, pull.node, &params));
}

}  // namespace pleshard::kernels
