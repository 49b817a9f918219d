#include <span>

#include "bench/gpu_benches.hpp"
#include "bench/gpu_timing.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/ngram_ids_cuda.hpp"

namespace pleshard {

std::vector<std::int64_t> hash_on_gpu(const kernels::NgramHashParams& params, const TokenBatch& batch,
                                      std::size_t count, const HashBenchOptions& options, HashBenchResult& result) {
  kernels::DeviceBuffer<std::int64_t> d_tokens(batch.tokens.size());
  kernels::DeviceBuffer<std::int64_t> d_qsl(batch.query_start_loc.size());
  kernels::DeviceBuffer<std::int64_t> d_context(batch.context.size());
  kernels::DeviceBuffer<std::int64_t> d_ids(count);
  d_tokens.copy_from_host(std::span<const std::int64_t>(batch.tokens));
  d_qsl.copy_from_host(std::span<const std::int64_t>(batch.query_start_loc));
  d_context.copy_from_host(std::span<const std::int64_t>(batch.context));
  PLESHARD_CUDA_CHECK(cudaMemset(d_ids.data(), 0xff, d_ids.bytes()));
  const kernels::NgramBatchView view{d_tokens.data(), batch.num_tokens(), d_qsl.data(), batch.num_requests(),
                                     d_context.data()};
  result.seconds = gpu_median_seconds([&] { kernels::compute_ngram_ids_cuda(params, view, d_ids.data(), nullptr); },
                                      options.min_repeats, options.min_seconds, &result.repeats);
  std::vector<std::int64_t> ids(count);
  d_ids.copy_to_host(std::span<std::int64_t>(ids));
  PLESHARD_CUDA_CHECK(cudaDeviceSynchronize());
  return ids;
}

}  // namespace pleshard
