// The device and pinned tiers' step captured in a CUDA graph and replayed with changing
// tokens, request counts and token counts up to the captured maximum (empty and full
// batches included) gives embeddings bit-identical to the host tier; a batch larger than
// the capture is refused. Where ranks share a GPU (no NCCL), capturing is refused. Skips
// without a GPU.

#include <gtest/gtest.h>
#include <mpi.h>

#include <random>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "engine/embed.hpp"
#include "engine/ple_engine.hpp"
#include "hash/random_batches.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

constexpr std::int64_t k_max_tokens = 64;
constexpr std::int64_t k_max_requests = 8;

// A batch of at most k_max_requests requests and k_max_tokens tokens.
TokenBatch random_batch(std::mt19937_64& rng, const ModelConfig& config) {
  TokenBatch batch(config.ngram_size);
  std::int64_t tokens = 0;
  for (const auto& r : random_requests(rng, config, static_cast<int>(k_max_requests), 16)) {
    if (tokens + static_cast<std::int64_t>(r.tokens.size()) > k_max_tokens) break;
    tokens += static_cast<std::int64_t>(r.tokens.size());
    batch.add_request(r.tokens, r.context);
  }
  return batch;
}

TEST(CudaGraph, ReplaysMatchTheHostTier) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device";
  int rank = 0;
  int world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const SharedScratchDir dir("pleshard_graph");
  std::mt19937_64 rng(41);
  for (const char* dtype : {static_cast<const char*>(nullptr), "float8_e4m3fn", "nvfp4"}) {
    const ModelConfig config = small_config(dtype, 3);
    const auto path = dir / (dtype == nullptr ? "bf16" : dtype);
    if (rank == 0) write_checkpoint(path, config, synthetic_tables(config, default_format(config), 6), {});
    MPI_Barrier(MPI_COMM_WORLD);
    const auto checkpoint = open_ple_checkpoint(path, config);
    const Communicators comms(MPI_COMM_WORLD, make_topology(world, rank, 1, world));
    for (const StorageTier tier : {StorageTier::device, StorageTier::pinned}) {
      SCOPED_TRACE(std::string(dtype == nullptr ? "bf16" : dtype) + " " + to_string(tier));
      PleEngine engine(comms, config, *checkpoint, OutDtype::bf16, tier);
      if (std::string(engine.backend()) != "nccl") {
        EXPECT_THROW(engine.capture_graph(k_max_tokens, k_max_requests), InputError);
        continue;
      }
      engine.capture_graph(k_max_tokens, k_max_requests);
      ASSERT_TRUE(engine.graph_captured());
      for (int step = 0; step < 12; ++step) {
        TokenBatch batch = step == 0 ? TokenBatch(config.ngram_size) : random_batch(rng, config);
        if (step == 1) {  // exactly the captured size
          batch = TokenBatch(config.ngram_size);
          for (std::int64_t r = 0; r < k_max_requests; ++r) {
            std::vector<std::int64_t> tokens(k_max_tokens / k_max_requests);
            for (auto& t : tokens) t = random_token(rng, config);
            batch.add_request(tokens, fresh_context(config.ngram_size, config.eos_token_id));
          }
        }
        std::vector<ExchangeResult> got;
        engine.forward(batch, got);
        const auto expected = embed_batch(config, *checkpoint, batch, OutDtype::bf16);
        ASSERT_EQ(got.size(), expected.size());
        for (std::size_t d = 0; d < got.size(); ++d) {
          EXPECT_EQ(got[d].count, batch.num_tokens()) << "step " << step;
          EXPECT_TRUE(got[d].embeddings == expected[d].data)
              << "step " << step << " (" << batch.num_tokens() << " tokens) layer " << d;
        }
      }
      TokenBatch too_big(config.ngram_size);
      too_big.add_request(std::vector<std::int64_t>(k_max_tokens + 1, 5),
                          fresh_context(config.ngram_size, config.eos_token_id));
      std::vector<ExchangeResult> ignored;
      EXPECT_THROW(engine.forward(too_big, ignored), InputError);
    }
  }
}

}  // namespace
