#include <algorithm>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/id_tally.cuh"
#include "kernels/cuda/ngram_ids_cuda.hpp"

namespace pleshard::kernels {

namespace {

constexpr int k_max_threads = 256;
constexpr int k_staging_bytes = 48 * 1024;  // the default dynamic shared-memory limit

// One layer of one batch.
struct BatchIds {
  NgramHashParams params;
  NgramBatchView batch;
  __device__ void operator()(int /*layer*/, std::int64_t t, std::int64_t* ids) const {
    ngram_ids_of_token(params, batch, t, ids);
  }
  __device__ std::int64_t operator()(int /*layer*/, std::int64_t t, int h) const {
    return ngram_id_of_token(params, batch, t, h);
  }
};

// Every layer of a slot batch; the layers' parameters live in device memory.
struct StepIds {
  const NgramHashParams* params;
  SlotBatchView batch;
  __device__ void operator()(int layer, std::int64_t t, std::int64_t* ids) const {
    ngram_ids_of_slot_token(params[layer], batch, t, ids);
  }
  __device__ std::int64_t operator()(int layer, std::int64_t t, int h) const {
    return ngram_id_of_slot_token(params[layer], batch, t, h);
  }
};

// One thread per token, one grid row (blockIdx.y) per layer. A thread's H ids are
// contiguous in the output, so threads would write with a stride of H * 8 bytes; the block
// stages its ids in shared memory instead (rows padded to an odd number of words against
// bank conflicts) and writes them out coalesced. Passed as a grid constant so the
// parameters are read in place rather than copied per thread.
template <typename Source>
__global__ void __launch_bounds__(k_max_threads)
    ngram_ids_kernel(const __grid_constant__ Source source, std::int64_t num_tokens, int heads,
                     std::int64_t* __restrict__ ids, const __grid_constant__ IdTally tally) {
  extern __shared__ std::int64_t staged[];
  const int pitch = heads | 1;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x;
  const std::int64_t t = first + threadIdx.x;
  if (t < num_tokens) source(static_cast<int>(blockIdx.y), t, staged + threadIdx.x * pitch);
  __syncthreads();

  const std::int64_t tokens = min(static_cast<std::int64_t>(blockDim.x), num_tokens - first);
  const int count = static_cast<int>(tokens) * heads;
  const int layer = static_cast<int>(blockIdx.y);
  std::int64_t* out = ids + (static_cast<std::int64_t>(layer) * num_tokens + first) * heads;
  unsigned long long outside = 0;
  for (int e = threadIdx.x; e < count; e += blockDim.x) {
    const int row = e / heads;
    const std::int64_t id = staged[row * pitch + (e - row * heads)];
    out[e] = id;
    if (tally.outside != nullptr) outside += tally.counts(layer, first + row, id) ? 1 : 0;
  }
  if (tally.outside != nullptr) add_to_tally(tally, layer, outside);
}

// One thread per id (token, head), writing in order: for steps of too few tokens to fill
// the GPU a thread per token (a 64-token step would be one block a layer, each thread
// hashing its token's heads one after the other). Each thread walks its head's n-gram.
template <typename Source>
__global__ void __launch_bounds__(k_max_threads)
    ngram_id_kernel(const __grid_constant__ Source source, std::int64_t num_tokens, int heads,
                    std::int64_t* __restrict__ ids, const __grid_constant__ IdTally tally) {
  const std::int64_t count = num_tokens * heads;
  const int layer = static_cast<int>(blockIdx.y);
  std::int64_t* out = ids + static_cast<std::int64_t>(layer) * count;
  unsigned long long outside = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t t = i / heads;
    const std::int64_t id = source(layer, t, static_cast<int>(i - t * heads));
    out[i] = id;
    if (tally.outside != nullptr) outside += tally.counts(layer, t, id) ? 1 : 0;
  }
  if (tally.outside != nullptr) add_to_tally(tally, layer, outside);
}

template <typename Source>
void launch(const Source& source, std::int64_t num_tokens, int heads, int layers, std::int64_t* ids,
            cudaStream_t stream, const IdTally& tally = {}) {
  if (num_tokens == 0 || layers == 0) return;
  const int pitch = heads | 1;
  const int bytes_per_token = pitch * static_cast<int>(sizeof(std::int64_t));
  // As many tokens per block as the staging area holds, in whole warps.
  const int threads = std::clamp(k_staging_bytes / bytes_per_token / 32 * 32, 32, k_max_threads);
  const std::int64_t blocks = (num_tokens + threads - 1) / threads;
  if (blocks * layers < multiprocessors()) {
    const std::int64_t id_blocks =
        std::min<std::int64_t>((num_tokens * heads + k_max_threads - 1) / k_max_threads, 1 << 16);
    ngram_id_kernel<<<dim3(static_cast<unsigned>(id_blocks), static_cast<unsigned>(layers)), k_max_threads, 0,
                      stream>>>(source, num_tokens, heads, ids, tally);
    PLESHARD_CUDA_CHECK_LAUNCH();
    return;
  }
  const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(layers));
  ngram_ids_kernel<<<grid, threads, static_cast<std::size_t>(threads * bytes_per_token), stream>>>(source, num_tokens,
                                                                                                   heads, ids, tally);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

}  // namespace

void compute_ngram_ids_cuda(const NgramHashParams& params, const NgramBatchView& batch, std::int64_t* ids,
                            cudaStream_t stream) {
  launch(BatchIds{params, batch}, batch.num_tokens, params.total_heads(), 1, ids, stream);
}

void compute_step_ids_cuda(const NgramHashParams* params, int layers, int heads, const SlotBatchView& batch,
                           std::int64_t* ids, cudaStream_t stream, const IdTally& tally) {
  launch(StepIds{params, batch}, batch.tokens(), heads, layers, ids, stream, tally);
}

}  // namespace pleshard::kernels
