// Steps replayed from CUDA graphs of bucketed sizes give embeddings bit-identical to the host
// tier: every bucket from 1 token to the largest (which is the step budget, not a power of
// two), in changing order, with changing tokens and request counts, empty batches included;
// a batch larger than the budget is refused. The pinned tier's distinct-row gather (queries
// of 2^17 ids or more) runs on its side stream inside the graph. Where ranks share a GPU (no
// NCCL), graphs are refused. Skips without a GPU.

#include <gtest/gtest.h>
#include <mpi.h>

#include <random>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "engine/embed.hpp"
#include "engine/ple_engine.hpp"
#include "hash/random_batches.hpp"
#include "kernels/gpu_device.hpp"
#if PLESHARD_HAVE_CUDA
#include "store/gpu_table.hpp"
#endif

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

constexpr std::int64_t k_max_tokens = 48;  // buckets 1, 2, 4, ..., 32 and 48

// The test's ranks share one node: they share GPUs when there are more ranks than GPUs.
bool ranks_share_gpu(int world) { return kernels::gpu_count() < world; }

// A batch of exactly `tokens` tokens in requests of random lengths (empty ones included).
TokenBatch batch_of(std::mt19937_64& rng, const ModelConfig& config, std::int64_t tokens) {
  TokenBatch batch(config.ngram_size);
  std::int64_t left = tokens;
  while (left > 0 || rng() % 4 == 0) {
    const std::int64_t take = std::min<std::int64_t>(left, static_cast<std::int64_t>(rng() % 9));
    std::vector<std::int64_t> t(static_cast<std::size_t>(take));
    for (auto& v : t) v = random_token(rng, config);
    std::vector<std::int64_t> context(static_cast<std::size_t>(config.ngram_size - 1));
    for (auto& v : context) v = random_token(rng, config) % config.vocab_size;
    batch.add_request(t, context);
    left -= take;
  }
  return batch;
}

void expect_host_bytes(PleEngine& engine, const ModelConfig& config, const PleCheckpoint& checkpoint,
                       const TokenBatch& batch, const StepOutput& out, const std::string& what) {
  engine.wait();
  const auto expected = embed_batch(config, checkpoint, batch, OutDtype::bf16);
  ASSERT_EQ(out.layers.size(), expected.size());
  for (std::size_t d = 0; d < expected.size(); ++d) {
    EXPECT_EQ(out.layers[d].rows, batch.num_tokens()) << what;
    EXPECT_TRUE(to_host(engine.space(), out.layers[d]) == expected[d].data) << what << " layer " << d;
  }
}

TEST(CudaGraph, EveryBucketMatchesTheHostTier) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device";
  int rank = 0;
  int world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const SharedScratchDir dir("pleshard_graph");
  for (const char* dtype : {static_cast<const char*>(nullptr), "float8_e4m3fn", "nvfp4"}) {
    const ModelConfig config = small_config(dtype, 3);
    const auto path = dir / (dtype == nullptr ? "bf16" : dtype);
    if (rank == 0) write_checkpoint(path, config, synthetic_tables(config, default_format(config), 6), {});
    MPI_Barrier(MPI_COMM_WORLD);
    const auto checkpoint = open_ple_checkpoint(path, config);
    const Communicators comms(MPI_COMM_WORLD, make_topology(world, rank, 1, world));
    for (const StorageTier tier : {StorageTier::device, StorageTier::pinned}) {
      SCOPED_TRACE(std::string(dtype == nullptr ? "bf16" : dtype) + " " + to_string(tier));
      EngineOptions options;
      options.tier = tier;
      options.max_tokens = k_max_tokens;
      options.cuda_graphs = true;
      // Ranks on one GPU with the device tier read one copy in place (`auto` takes peer-read),
      // which graphs capture; ranks sharing GPUs otherwise exchange through host copies, which
      // they cannot.
      const bool peer_reads = world > 1 && tier == StorageTier::device && kernels::gpu_count() == 1;
      if (world > 1 && ranks_share_gpu(world) && !peer_reads) {
        EXPECT_THROW(PleEngine(comms, config, *checkpoint, options), InputError);
        continue;
      }
      PleEngine engine(comms, config, *checkpoint, options);
      if (peer_reads) {
        EXPECT_STREQ(engine.exchange(), "peer-read");
      }
      // The same sizes on every rank (the ETP group steps together); each bucket at its
      // edges, the largest bucket (the budget) included, then back down.
      std::mt19937_64 rng(41 + static_cast<std::uint64_t>(rank));
      const std::int64_t sizes[] = {0, 1, 2, 3, 4, 5, 8, 9, 16, 17, 32, 33, 47, 48, 7, 1, 0, 30, 48};
      for (const std::int64_t tokens : sizes) {
        const TokenBatch batch = batch_of(rng, config, tokens);
        const StepOutput out = engine.forward(batch);
        expect_host_bytes(engine, config, *checkpoint, batch, out, std::to_string(tokens) + " tokens");
      }
      // Buckets 1, 2, 4, 8, 16, 32, 48. One rank alone hashes its one slot in the decode,
      // which in graphs of this small model (at most 6 blocks a launch) reads the batch in
      // its pinned buffer: a graph per buffer, where steps of both parities reached the
      // bucket (all but bucket 2, which one step reached). So does a group reading one copy
      // in place (LocalExchange). A group of several ranks that exchanges gathers the slots
      // into the space first: a graph per bucket.
      EXPECT_EQ(engine.stats().graphs_captured, world == 1 || peer_reads ? 13 : 7);
      EXPECT_EQ(engine.stats().graph_replays, static_cast<std::int64_t>(std::size(sizes)));
      const TokenBatch too_big = batch_of(rng, config, k_max_tokens + 1);
      EXPECT_THROW((void)engine.forward(too_big), InputError);
    }
  }
}

// Groups of one rank route with any strategy as the identity: owner and hierarchical
// routing are captured and replayed there, bit-identical. Groups of several ranks, each with
// a GPU of its own, capture the owner exchange in fixed-size messages, bit-identical over
// steps of changing sizes; the hierarchical one they refuse.
TEST(CudaGraph, OwnerRoutingIsCapturedWhereItCanBe) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device";
  int rank = 0;
  int world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const SharedScratchDir dir("pleshard_graph_owner");
  const ModelConfig config = small_config("float8_e4m3fn", 3);
  if (rank == 0) write_checkpoint(dir / "fp8", config, synthetic_tables(config, default_format(config), 6), {});
  MPI_Barrier(MPI_COMM_WORLD);
  const auto checkpoint = open_ple_checkpoint(dir / "fp8", config);
  for (const ExchangeStrategy strategy : {ExchangeStrategy::owner, ExchangeStrategy::hierarchical}) {
    SCOPED_TRACE(to_string(strategy));
    EngineOptions options;
    options.tier = StorageTier::device;
    options.max_tokens = k_max_tokens;
    options.cuda_graphs = true;
    options.exchange = strategy;
    const std::int64_t sizes[] = {1, 5, 48, 17, 0, 33};
    // Ranks of one group step with their own counts (the slot and bucket are the largest's):
    // a graph captured at one step replays steps whose ranks hold fewer tokens.
    const auto steps_match = [&](PleEngine& engine) {
      std::mt19937_64 rng(43 + static_cast<std::uint64_t>(rank));
      for (const std::int64_t size : sizes) {
        const std::int64_t tokens = std::max<std::int64_t>(0, size - rank);
        const TokenBatch batch = batch_of(rng, config, tokens);
        const StepOutput out = engine.forward(batch);
        expect_host_bytes(engine, config, *checkpoint, batch, out, std::to_string(tokens) + " tokens");
      }
      EXPECT_EQ(engine.stats().graph_replays, static_cast<std::int64_t>(std::size(sizes)));
    };
    if (world > 1) {
      const Communicators shared(MPI_COMM_WORLD, make_topology(world, rank, 1, world));
      if (strategy == ExchangeStrategy::hierarchical || ranks_share_gpu(world)) {
        EXPECT_THROW(PleEngine(shared, config, *checkpoint, options), InputError);
      } else {
        PleEngine engine(shared, config, *checkpoint, options);
        EXPECT_STREQ(engine.exchange(), "owner");
        steps_match(engine);
      }
    }
    const Communicators alone(MPI_COMM_WORLD, make_topology(world, rank, 1, 1));
    PleEngine engine(alone, config, *checkpoint, options);
    EXPECT_STREQ(engine.exchange(), to_string(strategy));
    steps_match(engine);
  }
}

// Queries of at least k_pinned_group_min_ids ids take the pinned tier's distinct-row gather
// on its side stream; captured and replayed, with other sizes in between.
#if PLESHARD_HAVE_CUDA
TEST(CudaGraph, PinnedDistinctRowGatherIsCaptured) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device";
  int rank = 0;
  int world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world > 1 && ranks_share_gpu(world)) GTEST_SKIP() << "ranks share a GPU: no graphs";
  const SharedScratchDir dir("pleshard_graph_pinned");
  const ModelConfig config = small_config("float8_e4m3fn", 3);
  if (rank == 0) write_checkpoint(dir / "ckpt", config, synthetic_tables(config, RowFormat::fp8, 6), {});
  MPI_Barrier(MPI_COMM_WORLD);
  const auto checkpoint = open_ple_checkpoint(dir / "ckpt", config);
  const Communicators comms(MPI_COMM_WORLD, make_topology(world, rank, 1, world));
  // Slots of the whole group are looked up: enough tokens for 2^17 ids on every rank count.
  const std::int64_t large = k_pinned_group_min_ids / config.total_heads() / world + 100;
  EngineOptions options;
  options.tier = StorageTier::pinned;
  options.max_tokens = large;
  options.cuda_graphs = true;
  PleEngine engine(comms, config, *checkpoint, options);
  std::mt19937_64 rng(5 + static_cast<std::uint64_t>(rank));
  for (const std::int64_t tokens : {large, std::int64_t{100}, large - 1, large}) {
    const TokenBatch batch = batch_of(rng, config, tokens);
    const StepOutput out = engine.forward(batch);
    expect_host_bytes(engine, config, *checkpoint, batch, out, std::to_string(tokens) + " tokens");
  }
}
#endif

}  // namespace
