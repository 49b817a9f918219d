// A strategy registered from test files alone (toy_exchange.cpp, and toy-three here) —
// nothing under lib/ names it — is taken by `--exchange` and Python's `exchange=` (by name),
// listed with the others, chosen by `auto` where its rule says so, and run by the engine: the batch job through it
// gives embeddings bit-identical to a single process hashing and looking up whole requests. Runs on 1, 2 and 3 ranks
// (one ETP group of all of them).

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <string>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "engine/embed.hpp"
#include "engine/exchange_strategy.hpp"
#include "engine/gather_reduce_exchange.hpp"
#include "extension/toy_exchange.hpp"
#include "format/embedding_reader.hpp"
#include "job/batch_job.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;
namespace fs = std::filesystem;

const ExchangeStrategy k_toy = toy_exchange::strategy();

// Chosen by `auto` before every built-in one, for groups of exactly three ranks.
const ExchangeStrategy k_toy_auto = register_exchange_strategy([] {
  StrategyDescriptor d;
  d.name = "toy-three";
  d.help = "a test's strategy for groups of three";
  d.groups = slot_groups;
  d.chosen_by_auto = [](const ExchangeFacts& f) { return f.topology.etp == 3; };
  d.auto_order = -2;
  d.auto_help = "where an ETP group has three ranks";
  d.make = [](const ExchangeContext& c) { return make_slot_exchange(c, "toy-three"); };
  return d;
}());

TEST(ToyExchange, IsNamedListedAndChosenLikeTheBuiltIns) {
  EXPECT_EQ(parse_exchange_strategy("toy-gather"), k_toy);
  EXPECT_STREQ(to_string(k_toy), "toy-gather");
  const auto names = exchange_strategy_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "toy-gather"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "owner"), names.end());
  EXPECT_NE(exchange_strategy_help().find("toy-gather (a test's own gather-reduce)"), std::string::npos);
  EXPECT_NE(exchange_strategy_help().find("toy-three where an ETP group has three ranks"), std::string::npos);
  // The built-ins keep their ids and names.
  EXPECT_STREQ(to_string(ExchangeStrategy::owner), "owner");
  EXPECT_EQ(parse_exchange_strategy("hierarchical"), ExchangeStrategy::hierarchical);
  // A name is registered once; a strategy needs a name, groups and a factory.
  StrategyDescriptor again = descriptor_of(k_toy);
  EXPECT_THROW((void)register_exchange_strategy(again), InputError);
  StrategyDescriptor nameless = again;
  nameless.name = "";
  EXPECT_THROW((void)register_exchange_strategy(nameless), InputError);
  StrategyDescriptor no_factory = again;
  no_factory.name = "toy-unmade";
  no_factory.make = nullptr;
  EXPECT_THROW((void)register_exchange_strategy(no_factory), InputError);
  try {
    (void)parse_exchange_strategy("toy");
    ADD_FAILURE() << "an unknown name was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("toy-gather"), std::string::npos) << e.what();
  }
  // `auto`: the toy's rule first, then peer-read's, owner's, gather-reduce.
  EXPECT_EQ(choose_exchange(ExchangeStrategy::automatic, {make_topology(3, 0, 1, 3), false}, false), k_toy_auto);
  EXPECT_EQ(choose_exchange(ExchangeStrategy::automatic, {make_topology(4, 0, 1, 4), false}, false),
            ExchangeStrategy::owner);
  EXPECT_EQ(choose_exchange(ExchangeStrategy::automatic, {make_topology(4, 0, 1, 4), true}, false),
            ExchangeStrategy::gather_reduce);
  EXPECT_EQ(choose_exchange(k_toy, {make_topology(4, 0, 1, 4), true}, false), k_toy);
}

TEST(ToyExchange, TheBatchJobThroughItMatchesASingleProcess) {
  int rank = 0;
  int world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const SharedScratchDir dir("pleshard_toy_exchange");
  const ModelConfig config = small_config(nullptr, 5);
  const fs::path ckpt_path = dir / "ckpt";
  if (rank == 0)
    write_checkpoint(ckpt_path, config, synthetic_tables(config, RowFormat::bf16, 4), {CheckpointKind::safetensors});
  MPI_Barrier(MPI_COMM_WORLD);
  SyntheticRequestsSpec spec;
  spec.count = 7;
  spec.min_tokens = 1;
  spec.max_tokens = 40;
  spec.vocab_size = config.vocab_size;
  spec.seed = 5;
  const auto requests = make_synthetic_requests(spec);
  std::vector<LayerEmbeddings> expected;
  if (rank == 0) {
    const auto serial = open_ple_checkpoint(ckpt_path, config);
    TokenBatch whole(config.ngram_size);
    for (const auto& r : requests) whole.add_request(r.tokens, fresh_context(config.ngram_size));
    expected = embed_batch(config, *serial, whole, OutDtype::bf16);
  }
  const auto checkpoint = open_ple_checkpoint(ckpt_path, config, {});
  for (const ExchangeStrategy strategy : {k_toy, ExchangeStrategy::automatic}) {
    SCOPED_TRACE(to_string(strategy));
    toy_exchange::reset_steps();
    const Communicators comms(MPI_COMM_WORLD, make_topology(world, rank, 1, world));
    BatchJobOptions options;
    options.exchange = strategy;
    options.schedule = {16, 2};
    options.storage = StorageTier::host;
    options.out = dir / "out.h5";
    const BatchJobReport report = run_batch_job(comms, config, *checkpoint, requests, options);
    const char* chosen = strategy == k_toy ? "toy-gather"
                         : world == 3      ? "toy-three"
                         : world > 1       ? "peer-read"  // one node, the host tier
                                           : "gather-reduce";
    EXPECT_STREQ(report.exchange.c_str(), chosen);
    if (strategy == k_toy) {
      EXPECT_GT(toy_exchange::steps(), 0);
    }
    if (rank == 0) {
      const EmbeddingFile got = read_embeddings_h5(options.out, config.num_ple_layers(), OutDtype::bf16);
      for (std::size_t d = 0; d < got.layers.size() && d < expected.size(); ++d)
        EXPECT_TRUE(got.layers[d] == expected[d].data) << "layer " << d << " differs";
      EXPECT_EQ(got.layers.size(), expected.size());
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) fs::remove(options.out);
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

}  // namespace
