// A step started and its tables waited for one at a time (PleEngine::start, wait_table,
// finish) gives forward()'s bytes, table by table: on one rank with every table on the host
// tier (the step's tables enqueued together), with the tables on two tiers (each tier's
// tables signalled as they are decoded, the faster first; on a GPU, device and pinned tables,
// the pinned one read through UVA or gathered by the host), and on every rank of an ETP group
// of several ranks (the combine first). Also what is refused between start() and finish().

#include <gtest/gtest.h>
#include <mpi.h>

#include <random>
#include <vector>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "engine/embed.hpp"
#include "engine/ple_engine.hpp"
#include "extension/mirror_tier.hpp"
#include "hash/random_batches.hpp"
#include "store/host_reads.hpp"
#include "store/storage_tier.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

using Tables = std::vector<std::vector<std::uint8_t>>;

Tables by_forward(PleEngine& engine, const TokenBatch& batch) {
  const StepOutput out = engine.forward(batch);
  engine.wait();
  Tables tables;
  for (const EmbeddingView& view : out.layers) tables.push_back(to_host(engine.space(), view));
  return tables;
}

// Started, then its tables waited for from the last to the first (any order is allowed),
// each read as wait_table handed it, then finished; finish()'s views are the same.
Tables by_start(PleEngine& engine, const TokenBatch& batch) {
  engine.start(batch);
  Tables tables(static_cast<std::size_t>(engine.num_layers()));
  std::vector<EmbeddingView> views(tables.size());
  for (int d = engine.num_layers() - 1; d >= 0; --d) {
    views[static_cast<std::size_t>(d)] = engine.wait_table(d);
    engine.space().synchronize();  // the host reads it: the table's work done
    tables[static_cast<std::size_t>(d)] = to_host(engine.space(), views[static_cast<std::size_t>(d)]);
  }
  const StepOutput out = engine.finish();
  EXPECT_EQ(out.layers.size(), tables.size());
  for (std::size_t d = 0; d < out.layers.size() && d < views.size(); ++d) {
    EXPECT_EQ(out.layers[d].data, views[d].data) << "table " << d;
    EXPECT_EQ(out.layers[d].rows, views[d].rows) << "table " << d;
  }
  return tables;
}

// `early`: the tables each step signals part by part, as each is decoded, rather than at its end.
void expect_started_as_forward(const std::vector<StorageTier>& placement, int etp, std::int64_t early,
                               HostReads host_reads = HostReads::automatic) {
  int world = 1;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const ModelConfig config = small_config("nvfp4", 3);
  const auto checkpoint = synthetic_checkpoint(config, RowFormat::nvfp4, 41);
  MPI_Comm comm = MPI_COMM_SELF;
  int ranks = 1;
  int my_rank = 0;
  if (etp > 1) {
    comm = MPI_COMM_WORLD;
    ranks = world;
    my_rank = rank;
  }
  const Communicators comms(comm, make_topology(ranks, my_rank, 1, etp > 1 ? ranks : 1));
  EngineOptions options;
  options.max_tokens = 256;
  options.placement = placement;
  options.host_reads = host_reads;
  PleEngine started(comms, config, *checkpoint, options);
  PleEngine forwarded(comms, config, *checkpoint, options);
  std::mt19937_64 rng(17 + static_cast<std::uint64_t>(rank));
  for (int step = 0; step < 4; ++step) {
    const TokenBatch batch = to_batch(config, random_requests(rng, config, 5, 50));
    const Tables want = by_forward(forwarded, batch);
    const Tables got = by_start(started, batch);
    EXPECT_EQ(got, want) << Placement{placement}.describe() << ", step " << step << ", rank " << rank;
    // Started and forwarded steps follow one another in one engine.
    EXPECT_EQ(by_forward(started, batch), want) << "step " << step;
  }
  EXPECT_EQ(started.stats().started_steps, 4);
  EXPECT_EQ(started.stats().tables_ready_early, 4 * early) << Placement{placement}.describe();
}

TEST(StartedSteps, OneTierGivesForwardsBytes) {
  expect_started_as_forward({StorageTier::host, StorageTier::host}, 1, 0);
}

TEST(StartedSteps, TablesOnTwoTiersAreSignalledPartByPart) {
  // Two parts (RowStore::parts): the mirror tier's table and the host tier's.
  // The host tier's table first (the faster), then the mirror's: both signalled part by part.
  expect_started_as_forward({mirror_tier::tier(), StorageTier::host}, 1, 2);
  expect_started_as_forward({StorageTier::host, mirror_tier::tier()}, 1, 2);
}

TEST(StartedSteps, DeviceAndPinnedTablesOnAGpu) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU";
  // The device table first; the pinned one read through UVA, or gathered by the host while
  // the device table is read.
  for (const HostReads reads : {HostReads::uva, HostReads::gather, HostReads::both}) {
    expect_started_as_forward({StorageTier::device, StorageTier::pinned}, 1, 2, reads);
    expect_started_as_forward({StorageTier::pinned, StorageTier::device}, 1, 2, reads);
  }
}

TEST(StartedSteps, AGroupOfSeveralRanksCombinesFirst) {
  // Alone (np1), the group is one rank again.
  int world = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  expect_started_as_forward({mirror_tier::tier(), StorageTier::host}, 2, world > 1 ? 0 : 2);
}

TEST(StartedSteps, BetweenStartAndFinishOnlyTablesAreWaitedFor) {
  const ModelConfig config = small_config(nullptr, 3);
  const auto checkpoint = synthetic_checkpoint(config, RowFormat::bf16, 5);
  const Communicators comms(MPI_COMM_SELF, make_topology(1, 0, 1, 1));
  EngineOptions options;
  options.max_tokens = 64;
  PleEngine engine(comms, config, *checkpoint, options);
  std::mt19937_64 rng(3);
  const TokenBatch batch = to_batch(config, random_requests(rng, config, 3, 20));
  EXPECT_THROW((void)engine.wait_table(0), SystemError);  // nothing started
  EXPECT_THROW((void)engine.finish(), SystemError);
  engine.start(batch);
  EXPECT_THROW(engine.start(batch), SystemError);
  EXPECT_THROW((void)engine.forward(batch), SystemError);
  EXPECT_THROW(engine.wait(), SystemError);
  EXPECT_THROW((void)engine.wait_table(engine.num_layers()), InputError);
  EXPECT_THROW((void)engine.wait_table(-1), InputError);
  (void)engine.wait_table(0);
  (void)engine.finish();
  engine.wait();  // taken again once finished
  // A step that fails on the engine's thread fails its waiters and finish(), and the
  // engine steps again after.
  const TokenBatch too_large =
      to_batch(config, {{fresh_context(config.ngram_size), std::vector<std::int64_t>(100, 7)}});
  engine.start(too_large);
  EXPECT_THROW((void)engine.wait_table(0), InputError);
  EXPECT_THROW((void)engine.finish(), InputError);
  engine.start(batch);
  (void)engine.finish();
}

}  // namespace
