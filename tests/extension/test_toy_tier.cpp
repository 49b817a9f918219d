// A storage tier added from test files alone (mirror_tier.cpp), through the tier registry
// (store/tier_descriptor.hpp), with no edit of the library: "mirror", a host-memory tier
// that keeps its rows in vectors of its own, copied from what the host tier loads. Its name
// is then taken wherever tiers are named (--storage, --placement, the lists in messages),
// the automatic placement asks its demand and capabilities like any tier's, and an embed and
// an engine's steps through it, alone and beside the host tier, over 1 and 2 ranks, and its
// steps begun ahead (it fetches ahead), give the host tier's bytes exactly.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "engine/embed.hpp"
#include "engine/ple_engine.hpp"
#include "engine/table_placement.hpp"
#include "extension/mirror_tier.hpp"
#include "hash/random_batches.hpp"
#include "store/auto_placement.hpp"
#include "store/placement.hpp"
#include "store/tier_descriptor.hpp"
#include "store/tier_memory.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

StorageTier mirror() { return mirror_tier::tier(); }

TEST(ToyTier, NamedWhereverTiersAreNamed) {
  const StorageTier tier = mirror();
  EXPECT_EQ(parse_storage_tier("mirror"), tier);
  EXPECT_STREQ(to_string(tier), "mirror");
  const std::vector<std::string> names = storage_tier_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "mirror"), names.end());  // what --storage accepts
  // --storage's help names it with its own words, after the built-in tiers with theirs.
  const std::string help = storage_tier_help();
  EXPECT_NE(help.find("mirror (a copy of the host tier's rows)"), std::string::npos) << help;
  EXPECT_LT(help.find("device (GPU memory)"), help.find("mirror")) << help;
  EXPECT_FALSE(tier_uses_gpu(tier));
  // Among the tiers fastest first, where its order puts it.
  const std::vector<StorageTier> order = storage_tiers();
  const auto at = [&](StorageTier t) { return std::find(order.begin(), order.end(), t) - order.begin(); };
  EXPECT_LT(at(StorageTier::host), at(tier));
  EXPECT_LT(at(tier), at(StorageTier::disk));
  // --placement takes it, alone and beside the tiers that decode on the host...
  EXPECT_EQ(parse_placement("0=mirror,1=host", 2).tiers, (std::vector<StorageTier>{tier, StorageTier::host}));
  EXPECT_EQ(parse_placement("mirror", 1).describe(), "mirror");
  EXPECT_EQ(parse_placement("1=mirror,0=disk", 2).describe(), "0=disk,1=mirror");
  // ...and, decoding on the host, refuses it beside a tier that decodes on the GPU.
  try {
    check_placement({{tier, StorageTier::pinned}});
    ADD_FAILURE() << "mirror beside pinned accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the mirror tier decodes on the host and the pinned tier on the GPU"),
              std::string::npos)
        << e.what();
  }
  // A name no tier has: the message lists it with the built-ins.
  try {
    (void)parse_storage_tier("tape");
    ADD_FAILURE() << "tape accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("expected host, device, pinned, disk or mirror"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)register_tier(mirror_tier::descriptor()), Error);  // the name is taken
}

TEST(ToyTier, TheAutomaticPlacementAsksItsDemand) {
  // Without a GPU: the host tier first, then the mirror (slower), then the disk. A table the
  // host tier's demand does not fit, but the mirror's does, goes to the mirror.
  const StorageTier tier = mirror();
  const auto table = [&](std::uint64_t host, std::uint64_t mirrored) {
    TableDemand t;
    t.tiers = {{StorageTier::host, {{MemoryKind::host, host}}},
               {tier, {{MemoryKind::host, mirrored}}},
               {StorageTier::disk, {{MemoryKind::host, 1}}}};
    return t;
  };
  constexpr std::uint64_t k_gb = 1'000'000'000;
  const PlacementPlan plan = plan_placement(
      std::vector<TableDemand>{table(10 * k_gb, 10 * k_gb), table(50 * k_gb, 20 * k_gb)}, {false, true, 0, 40 * k_gb});
  EXPECT_EQ(plan.placement.tiers, (std::vector<StorageTier>{StorageTier::host, tier}));
  EXPECT_EQ(plan.host_left, 10 * k_gb);
  // What the host tier was short of, then the room the mirror found.
  EXPECT_EQ(plan.why[1], "host memory 30 GB; fits host memory's 30 GB left, hottest 2 of 2");
  // The engine's demands list it beside the built-ins.
  const ModelConfig config = small_config("nvfp4", 3);
  const TableLayout layout{RowFormat::nvfp4, 128, 1000};
  const RowRange range{0, 1000};
  const TableSpec spec = derive_table_specs(config).front();
  const RowProfile profile;
  const std::vector<TableDemand> demands =
      table_demands({{&layout, 1}, {&range, 1}, {&spec, 1}, profile, false, true, 0, 1});
  ASSERT_EQ(demands.size(), 1u);
  EXPECT_EQ(demands[0].bytes_on(tier), 1000u * layout.bytes_per_row());
}

// Each layer's embeddings of `batch` in the engine's output, copied to the host.
std::vector<std::vector<std::uint8_t>> forward(PleEngine& engine, const TokenBatch& batch) {
  const StepOutput out = engine.forward(batch);
  engine.wait();
  std::vector<std::vector<std::uint8_t>> layers;
  for (const EmbeddingView& view : out.layers) layers.push_back(to_host(engine.space(), view));
  return layers;
}

TEST(ToyTier, EmbedsAsTheHostTierDoes) {
  const StorageTier tier = mirror();
  std::mt19937_64 rng(5);
  const std::pair<const char*, RowFormat> formats[] = {
      {nullptr, RowFormat::bf16}, {"float8_e4m3fn", RowFormat::fp8_e8m0}, {"nvfp4", RowFormat::nvfp4}};
  for (const auto& [dtype, format] : formats) {
    const ModelConfig config = small_config(dtype, 3);
    const auto checkpoint = synthetic_checkpoint(config, format, 17);
    const TokenBatch batch = to_batch(config, random_requests(rng, config, 6, 40));
    const auto host = embed_batch(config, *checkpoint, batch, OutDtype::f32, StorageTier::host);
    const auto mirrored = embed_batch(config, *checkpoint, batch, OutDtype::f32, tier);
    ASSERT_EQ(host.size(), mirrored.size());
    for (std::size_t d = 0; d < host.size(); ++d)
      EXPECT_EQ(mirrored[d].data, host[d].data) << to_string(format) << " " << d;
  }
}

TEST(ToyTier, AnEngineRunsThroughItBesideTheHostTier) {
  const StorageTier tier = mirror();
  int world = 1;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const ModelConfig config = small_config("nvfp4", 3);
  const auto checkpoint = synthetic_checkpoint(config, RowFormat::nvfp4, 23);
  // Every rank its own tokens (TP 1) and one ETP group: each holds its share of the rows and
  // the owners answer the others' lookups.
  const Communicators comms(MPI_COMM_WORLD, make_topology(world, rank, 1, world));
  const Communicators alone(MPI_COMM_SELF, make_topology(1, 0, 1, 1));
  for (const std::vector<StorageTier>& placement :
       {std::vector<StorageTier>{tier, tier}, std::vector<StorageTier>{tier, StorageTier::host},
        std::vector<StorageTier>{StorageTier::host, tier}}) {
    EngineOptions options;
    options.max_tokens = 256;
    options.placement = placement;
    PleEngine engine(comms, config, *checkpoint, options);
    EngineOptions reference;
    reference.max_tokens = 256;
    PleEngine host(alone, config, *checkpoint, reference);  // every row on this rank's host tier
    std::mt19937_64 rng(31 + static_cast<std::uint64_t>(rank));
    for (int step = 0; step < 3; ++step) {
      const TokenBatch batch = to_batch(config, random_requests(rng, config, 5, 40));
      EXPECT_EQ(forward(engine, batch), forward(host, batch))
          << Placement{placement}.describe() << ", step " << step << ", rank " << rank;
    }
  }
}

TEST(ToyTier, ItsStepsBeginAheadOfTheirDecode) {
  // One rank alone (no collective in its exchange), the mirror's fetch ahead: each step's
  // rows are staged while the step before is decoded, steps of different sizes back to back
  // in output slots of their own, and every step gives the host tier's bytes.
  const StorageTier tier = mirror();
  const ModelConfig config = small_config("float8_e4m3fn", 3);
  const auto checkpoint = synthetic_checkpoint(config, RowFormat::fp8_e8m0, 29);
  const Communicators alone(MPI_COMM_SELF, make_topology(1, 0, 1, 1));
  std::mt19937_64 rng(37);
  std::vector<TokenBatch> batches;
  for (int s = 0; s < 6; ++s)
    batches.push_back(s == 3 ? TokenBatch(config.ngram_size)
                             : to_batch(config, random_requests(rng, config, 1 + 2 * s, 40)));
  EngineOptions options;
  options.max_tokens = 512;
  options.tier = tier;
  options.output_slots = static_cast<int>(batches.size());
  PleEngine engine(alone, config, *checkpoint, options);
  EngineOptions reference;
  reference.max_tokens = 512;
  PleEngine host(alone, config, *checkpoint, reference);
  std::vector<StepOutput> outs;
  for (std::size_t s = 0; s < batches.size(); ++s) {
    NextStep next;
    if (s + 1 < batches.size()) next.batch = &batches[s + 1];
    outs.push_back(engine.forward(batches[s], {}, next));
  }
  engine.wait();
  EXPECT_EQ(engine.stats().steps_fetched_ahead, static_cast<std::int64_t>(batches.size()) - 1);
  for (std::size_t s = 0; s < batches.size(); ++s) {
    std::vector<std::vector<std::uint8_t>> got;
    for (const EmbeddingView& view : outs[s].layers) got.push_back(to_host(engine.space(), view));
    EXPECT_EQ(got, forward(host, batches[s])) << "step " << s;
  }
}

}  // namespace
