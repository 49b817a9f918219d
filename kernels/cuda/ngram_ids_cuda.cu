#include <algorithm>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/ngram_ids_cuda.hpp"

namespace pleshard::kernels {

namespace {

constexpr int k_max_threads = 256;
constexpr int k_staging_bytes = 48 * 1024;  // the default dynamic shared-memory limit

// One thread per token. A thread's H ids are contiguous in the output, so threads write
// with a stride of H * 8 bytes; the block stages its ids in shared memory instead (rows
// padded to an odd number of words against bank conflicts) and writes them out coalesced.
__global__ void __launch_bounds__(k_max_threads)
    ngram_ids_kernel(const __grid_constant__ NgramHashParams params, NgramBatchView batch,
                     std::int64_t* __restrict__ ids) {
  extern __shared__ std::int64_t staged[];
  const int heads = params.total_heads();
  const int pitch = heads | 1;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x;
  const std::int64_t t = first + threadIdx.x;
  if (t < batch.num_tokens) ngram_ids_of_token(params, batch, t, staged + threadIdx.x * pitch);
  __syncthreads();

  const std::int64_t tokens = min(static_cast<std::int64_t>(blockDim.x), batch.num_tokens - first);
  const int count = static_cast<int>(tokens) * heads;
  std::int64_t* out = ids + first * heads;
  for (int e = threadIdx.x; e < count; e += blockDim.x) {
    const int row = e / heads;
    out[e] = staged[row * pitch + (e - row * heads)];
  }
}

}  // namespace

void compute_ngram_ids_cuda(const NgramHashParams& params, const NgramBatchView& batch,
                            std::int64_t* ids, cudaStream_t stream) {
  if (batch.num_tokens == 0) return;
  const int pitch = params.total_heads() | 1;
  const int bytes_per_token = pitch * static_cast<int>(sizeof(std::int64_t));
  // As many tokens per block as the staging area holds, in whole warps.
  const int threads = std::clamp(k_staging_bytes / bytes_per_token / 32 * 32, 32, k_max_threads);
  const std::int64_t blocks = (batch.num_tokens + threads - 1) / threads;
  ngram_ids_kernel<<<static_cast<unsigned>(blocks), threads,
                     static_cast<std::size_t>(threads * bytes_per_token), stream>>>(params, batch,
                                                                                  ids);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

}  // namespace pleshard::kernels
