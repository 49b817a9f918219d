#pragma once
// A step's batch copied from pinned host memory by the GPU's own loads. The copy engine
// takes several microseconds longer for a copy of more than 1 KB than for a short one (on
// the H200 machine: 6 µs more at 2 KB, docs/performance.md), which a short step's latency
// feels whole; a kernel reading the pinned buffer through UVA takes one round trip over
// PCIe, and reads only the data of a padded block (kernels/common/padded_block.hpp), writing
// its padding itself. In a CUDA graph the pull is a kernel node whose source and runs are
// set before each launch, so one graph serves every buffer. Built only with CUDA.

#include <cstddef>
#include <cstdint>
#include <optional>

#include <cuda_runtime_api.h>

#include "kernels/common/padded_block.hpp"

namespace pleshard::kernels {

// Whether pull_pinned_cuda takes a copy between these addresses: both in whole 8-byte words.
[[nodiscard]] bool pullable(const void* dst, const void* pinned);

// Copies `block` (pullable addresses, a valid block) from pinned host memory to GPU memory,
// ordered on `stream`: each run's data read, its padding written.
void pull_pinned_cuda(void* dst, const void* pinned, const PaddedBlock& block, cudaStream_t stream);

// A pull captured in a graph: its node and what a relaunch keeps (the destination, the
// launch's shape, the block's length). The graph machinery is here, beside the kernel, so
// that the kernel's arguments are known in one file.
struct CapturedPull {
  cudaGraphNode_t node = nullptr;
  cudaKernelNodeParams params{};
  std::uint64_t* dst = nullptr;
  std::int64_t words = 0;
};

// The graph's one pull, if it has one; a graph with more is refused (SystemError).
[[nodiscard]] std::optional<CapturedPull> find_pull(cudaGraph_t graph);

// Points the pull of `exec` (instantiated from the graph find_pull searched) at `pinned`,
// a block of the captured length laid out as `block`, for its next launches (launches
// already enqueued keep theirs).
void retarget_pull(const CapturedPull& pull, cudaGraphExec_t exec, const void* pinned, const PaddedBlock& block);

}  // namespace pleshard::kernels
