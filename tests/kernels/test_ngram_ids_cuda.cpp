// The CUDA hash kernel against the host kernel (itself checked against the reference).
// Skips at run time when no GPU is present.

#include <gtest/gtest.h>

#include <random>

#include "hash/ngram_ids.hpp"
#include "hash/random_batches.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/ngram_ids_cuda.hpp"
#include "model/table_spec.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

std::vector<std::int64_t> cuda_ids(const TableSpec& spec, const TokenBatch& batch) {
  using kernels::DeviceBuffer;
  const auto heads = static_cast<std::size_t>(spec.total_heads());
  DeviceBuffer<std::int64_t> tokens(batch.tokens.size());
  DeviceBuffer<std::int64_t> qsl(batch.query_start_loc.size());
  DeviceBuffer<std::int64_t> context(batch.context.size());
  DeviceBuffer<std::int64_t> ids(batch.tokens.size() * heads);
  tokens.copy_from_host(std::span<const std::int64_t>(batch.tokens));
  qsl.copy_from_host(std::span<const std::int64_t>(batch.query_start_loc));
  context.copy_from_host(std::span<const std::int64_t>(batch.context));
  PLESHARD_CUDA_CHECK(cudaMemset(ids.data(), 0xA5, ids.bytes()));  // poison
  kernels::compute_ngram_ids_cuda(make_hash_params(spec),
                                  {tokens.data(), batch.num_tokens(), qsl.data(), batch.num_requests(), context.data()},
                                  ids.data(), nullptr);
  std::vector<std::int64_t> out(ids.size());
  ids.copy_to_host(std::span<std::int64_t>(out));
  PLESHARD_CUDA_CHECK(cudaDeviceSynchronize());
  return out;
}

class CudaNgramIds : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(CudaNgramIds, EqualHostKernelOnRandomBatches) {
  std::mt19937_64 rng(31337);
  for (int model = 0; model < 100; ++model) {
    const ModelConfig config = random_config(rng);
    const auto spec = derive_table_spec(config, static_cast<int>(rng() % 4));
    for (int b = 0; b < 5; ++b) {
      const TokenBatch batch = to_batch(config, random_requests(rng, config, 40, 300));
      ASSERT_EQ(cuda_ids(spec, batch), compute_ngram_ids(spec, batch)) << "model " << model;
    }
  }
}

TEST_F(CudaNgramIds, LargeBatchEqualsHostKernel) {
  std::mt19937_64 rng(5);
  ModelConfig config = random_config(rng);
  config.ngram_size = 3;
  config.heads_per_ngram = 8;
  config.ple_embed_dim = 2560;
  const auto spec = derive_table_spec(config, 1);
  TokenBatch batch(config.ngram_size);
  while (batch.num_tokens() < (1 << 20)) {
    auto requests = random_requests(rng, config, 64, 4096);
    for (const auto& r : requests) batch.add_request(r.tokens, r.context);
  }
  ASSERT_EQ(cuda_ids(spec, batch), compute_ngram_ids(spec, batch));
}

TEST_F(CudaNgramIds, EmptyBatchLaunchesNothing) {
  std::mt19937_64 rng(6);
  const ModelConfig config = random_config(rng);
  TokenBatch batch(config.ngram_size);
  batch.add_request({}, fresh_context(config.ngram_size));
  EXPECT_TRUE(cuda_ids(derive_table_spec(config, 0), batch).empty());
}

}  // namespace
