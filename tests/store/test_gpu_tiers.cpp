// Device and pinned tiers against the host tier, bit for bit, for every format and output
// dtype: owned and foreign ids, padding ids, empty lookups, rows that do and do not split
// into 16-byte chunks. Skips without a GPU.

#include <gtest/gtest.h>

#include <random>

#include <nlohmann/json.hpp>

#include "ckpt/synthetic.hpp"
#include "kernels/cuda/device.hpp"
#include "store/gpu_table.hpp"
#include "store/host_table.hpp"

namespace {

using namespace pleshard;

ModelConfig config_with(const char* dtype, int ple_embed_dim) {
  nlohmann::json j = {{"vocab_size", 1000}, {"eos_token_id", 2}, {"num_hidden_layers", 2},
                      {"ngram_size", 3}, {"heads_per_ngram", 2}, {"ple_embed_dim", ple_embed_dim},
                      {"ngram_vocab_size_base", 700}, {"split_ngram_parts", 3}, {"ple_layer_ids", {1}}};
  if (dtype != nullptr) j["ple_embedding_dtype"] = dtype;
  return parse_model_config(j, "gpu tier config");
}

class GpuTiers : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(GpuTiers, EqualTheHostTierBitForBit) {
  struct Case {
    const char* dtype;
    RowFormat format;
  };
  const Case cases[] = {{nullptr, RowFormat::f32}, {nullptr, RowFormat::bf16}, {nullptr, RowFormat::f16},
                        {"float8_e4m3fn", RowFormat::fp8}, {"nvfp4", RowFormat::nvfp4}};
  std::mt19937_64 rng(12);
  for (int ple_embed_dim : {4 * 160, 4 * 32, 4 * 48}) {  // 48 values: nvfp4 rows of 24 bytes
    for (const auto& c : cases) {
      const ModelConfig config = config_with(c.dtype, ple_embed_dim);
      const TableSource source = synthetic_tables(config, c.format, 31).front();
      const std::int64_t rows = source.info.layout.rows;
      const RowRange range{97, rows - 41};
      const HostTable host(source, range);
      for (StorageTier tier : {StorageTier::device, StorageTier::pinned}) {
        const GpuTable gpu(source, range, tier);
        for (OutDtype dtype : {OutDtype::f32, OutDtype::bf16, OutDtype::f16}) {
          SCOPED_TRACE(std::string(to_string(c.format)) + " dim " + std::to_string(ple_embed_dim / 4) + " " +
                       to_string(tier) + " " + to_string(dtype));
          for (std::int64_t n : {0, 1, 37, 5000}) {
            std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
            for (auto& id : ids) id = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows));
            if (n > 2) ids[1] = 0;  // padding id
            const std::size_t out_bytes = ids.size() * static_cast<std::size_t>(config.head_dim()) * kernels::out_bytes(dtype);
            std::vector<std::uint8_t> expected(out_bytes), got(out_bytes, 0xCD);
            host.lookup(ids, dtype, expected.data());
            kernels::DeviceBuffer<std::int64_t> d_ids(ids.size());
            kernels::DeviceBuffer<std::uint8_t> d_out(out_bytes);
            d_ids.copy_from_host(std::span<const std::int64_t>(ids));
            PLESHARD_CUDA_CHECK(cudaMemset(d_out.data(), 0xCD, out_bytes));  // poison
            gpu.lookup(d_ids.data(), n, dtype, d_out.data(), nullptr);
            d_out.copy_to_host(std::span<std::uint8_t>(got));
            PLESHARD_CUDA_CHECK(cudaDeviceSynchronize());
            ASSERT_EQ(got, expected) << n << " ids";
          }
        }
      }
    }
  }
}

}  // namespace

#include "ckpt/checkpoint_fixtures.hpp"
#include "engine/embed.hpp"
#include "hash/random_batches.hpp"

namespace {

TEST_F(GpuTiers, EmbedGivesTheSameBytesFromEveryTier) {
  using namespace pleshard::testing_support;
  const ScratchDir dir;
  std::mt19937_64 rng(77);
  for (const char* dtype : {static_cast<const char*>(nullptr), "float8_e4m3fn", "nvfp4"}) {
    const ModelConfig config = small_config(dtype);
    const std::string name = dtype == nullptr ? "bf16" : dtype;
    write_checkpoint(dir / name, config, synthetic_tables(config, default_format(config), 5), {});
    const auto checkpoint = open_ple_checkpoint(dir / name, config);
    TokenBatch batch(config.ngram_size);
    for (const auto& r : random_requests(rng, config, 8, 60)) batch.add_request(r.tokens, r.context);
    const auto host = embed_batch(config, *checkpoint, batch, OutDtype::bf16, StorageTier::host);
    for (StorageTier tier : {StorageTier::device, StorageTier::pinned}) {
      const auto gpu = embed_batch(config, *checkpoint, batch, OutDtype::bf16, tier);
      ASSERT_EQ(gpu.size(), host.size());
      for (std::size_t d = 0; d < host.size(); ++d)
        EXPECT_EQ(gpu[d].data, host[d].data) << name << " " << to_string(tier) << " layer " << d;
    }
  }
}

}  // namespace
