#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/ngram_ids_cuda.hpp"

namespace pleshard::kernels {

namespace {

constexpr int k_threads = 256;

// One thread per token; the parameter block stays in the kernel's constant bank.
__global__ void __launch_bounds__(k_threads)
    ngram_ids_kernel(const __grid_constant__ NgramHashParams params, NgramBatchView batch,
                     std::int64_t* __restrict__ ids) {
  const std::int64_t heads = params.total_heads();
  for (std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       t < batch.num_tokens; t += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    ngram_ids_of_token(params, batch, t, ids + t * heads);
  }
}

}  // namespace

void compute_ngram_ids_cuda(const NgramHashParams& params, const NgramBatchView& batch,
                            std::int64_t* ids, cudaStream_t stream) {
  if (batch.num_tokens == 0) return;
  const std::int64_t blocks = (batch.num_tokens + k_threads - 1) / k_threads;
  const int grid = static_cast<int>(blocks < (1 << 20) ? blocks : (1 << 20));
  ngram_ids_kernel<<<grid, k_threads, 0, stream>>>(params, batch, ids);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

}  // namespace pleshard::kernels
