// A step begun inside the one before (NextStep: its rows fetched while that step is
// decoded). On the disk tier, steps forwarded back to back with no wait between them (each
// in an output slot of its own): every step's embeddings are bit for bit those of one
// process hashing and looking up on the host, as are the same steps forwarded alone; from
// safetensors and from HDF5 (both read on the store's thread, HDF5's chunks located when it
// opens) every step after the first was begun ahead. Each step is timed from its own forward(), so the
// caller's time between forward() calls is in no step. A batch or token counts other than
// the ones named are refused. A read that fails in a fetch begun ahead is reported by the
// step it belongs to, not by the step it was begun in, and the engine's next steps begin
// afresh. Tables behind a row cache, and tables placed on several tiers beside one that
// fetches ahead, are fetched ahead too. A store that does not fetch ahead (the host tier),
// or an engine told not to, runs the steps whole. On a GPU machine the disk tier's steps run on the GPU, else on the
// host; there the pinned tier's steps, alone, cached or beside device tables, fetched ahead
// under a slow decode, match one process too.

#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <numeric>
#include <random>
#include <thread>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "engine/embed.hpp"
#include "engine/ple_engine.hpp"
#include "hash/random_batches.hpp"
#include "store/host_reads.hpp"
#include "store/storage_tier.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

struct Steps {
  std::vector<TokenBatch> batches;
  std::int64_t most_tokens = 1;
};

// Steps of random requests, an empty one among them.
Steps random_steps(const ModelConfig& config, int count) {
  std::mt19937_64 rng(5);
  Steps steps;
  for (int s = 0; s < count; ++s) {
    steps.batches.push_back(s == 2 ? TokenBatch(config.ngram_size)
                                   : to_batch(config, random_requests(rng, config, 5, 30)));
    steps.most_tokens = std::max(steps.most_tokens, steps.batches.back().num_tokens());
  }
  return steps;
}

// Every step in an output slot of its own, so that steps run back to back and are read at
// the end.
EngineOptions options_for(StorageTier tier, const Steps& steps) {
  EngineOptions options;
  options.tier = tier;
  options.max_tokens = steps.most_tokens;
  options.output_slots = static_cast<int>(steps.batches.size());
  return options;
}

constexpr auto k_caller_work = std::chrono::milliseconds(20);

// Each step's embeddings of every layer, on the host, and the seconds from the first
// forward() to the last step's end; forwarded with their successor named where `ahead`,
// the caller busy for k_caller_work between forward() calls.
struct StepsRun {
  std::vector<std::vector<std::vector<std::uint8_t>>> layers;
  double seconds = 0;
};
StepsRun run_steps(PleEngine& engine, const Steps& steps, bool ahead) {
  std::vector<StepOutput> outs;
  const double start = MPI_Wtime();
  for (std::size_t s = 0; s < steps.batches.size(); ++s) {
    NextStep next;
    if (ahead && s + 1 < steps.batches.size()) next.batch = &steps.batches[s + 1];
    outs.push_back(engine.forward(steps.batches[s], {}, next));
    std::this_thread::sleep_for(k_caller_work);
  }
  engine.wait();
  StepsRun run;
  run.seconds = MPI_Wtime() - start;
  for (const StepOutput& out : outs) {
    auto& layers = run.layers.emplace_back();
    for (const EmbeddingView& view : out.layers) layers.push_back(to_host(engine.space(), view));
  }
  return run;
}

class FaultScope {
 public:
  explicit FaultScope(const FaultPlan& plan) { set_fault_plan(plan); }
  ~FaultScope() { set_fault_plan({}); }
  FaultScope(const FaultScope&) = delete;
  FaultScope& operator=(const FaultScope&) = delete;
};

// A step's output, every layer, is one process's embeddings of `batch`.
void expect_output_matches(const PleEngine& engine, const ModelConfig& config, const PleCheckpoint& checkpoint,
                           const TokenBatch& batch, const StepOutput& out) {
  const auto expected = embed_batch(config, checkpoint, batch, OutDtype::bf16);
  ASSERT_EQ(out.layers.size(), expected.size());
  for (std::size_t d = 0; d < expected.size(); ++d)
    EXPECT_EQ(to_host(engine.space(), out.layers[d]), expected[d].data) << "layer " << d;
}

// The GPU tests' model: FP8 + E8M0 rows made in place, one process.
struct PinnedModel {
  ModelConfig config = small_config("float8_e4m3fn", 3);
  std::unique_ptr<PleCheckpoint> checkpoint = synthetic_checkpoint(config, RowFormat::fp8_e8m0, 3);
  Communicators comms{MPI_COMM_SELF, make_topology(1, 0, 1, 1)};
};

TEST(FetchAhead, StepsMatchOneProcessAndStepsAlone) {
  const ScratchDir dir;
  const ModelConfig config = small_config("nvfp4", 3);
  const Communicators comms(MPI_COMM_SELF, make_topology(1, 0, 1, 1));
  const Steps steps = random_steps(config, 7);
  for (const CheckpointKind kind : {CheckpointKind::safetensors, CheckpointKind::hdf5}) {
    SCOPED_TRACE(to_string(kind));
    const auto path = dir / (kind == CheckpointKind::hdf5 ? "ckpt.h5" : "ckpt");
    write_checkpoint(path, config, synthetic_tables(config, RowFormat::nvfp4, 3), {kind});
    const auto checkpoint = open_ple_checkpoint(path, config);
    PleEngine ahead(comms, config, *checkpoint, options_for(StorageTier::disk, steps));
    const StepsRun got = run_steps(ahead, steps, true);
    const auto begun = static_cast<std::int64_t>(steps.batches.size()) - 1;
    // Both read a step's rows as plain reads of their files (HDF5: its chunks located when it
    // opens), on the store's thread: every step after the first fetched ahead.
    EXPECT_TRUE(checkpoint->reads_row_sets_on_any_thread());
    EXPECT_EQ(ahead.stats().steps_fetched_ahead, begun);
    PleEngine alone(comms, config, *checkpoint, options_for(StorageTier::disk, steps));
    const StepsRun plain = run_steps(alone, steps, false);
    EXPECT_EQ(alone.stats().steps_fetched_ahead, 0);
    for (std::size_t s = 0; s < steps.batches.size(); ++s) {
      const auto expected = embed_batch(config, *checkpoint, steps.batches[s], OutDtype::bf16);
      ASSERT_EQ(got.layers[s].size(), expected.size());
      for (std::size_t d = 0; d < expected.size(); ++d) {
        EXPECT_EQ(got.layers[s][d], expected[d].data) << "step " << s << " layer " << d;
        EXPECT_EQ(plain.layers[s][d], expected[d].data) << "step " << s << " layer " << d;
      }
    }
    // Every step timed once, from its own forward(): the steps' times leave out the caller's
    // work between the calls.
    const std::vector<double>& times = ahead.stats().step_seconds;
    ASSERT_EQ(times.size(), steps.batches.size());
    for (const double t : times) EXPECT_GT(t, 0);
    const double callers = std::chrono::duration<double>(k_caller_work).count() * static_cast<double>(times.size());
    EXPECT_LT(std::accumulate(times.begin(), times.end(), 0.0), got.seconds - 0.9 * callers);
  }
}

TEST(FetchAhead, AnotherBatchThanTheOneNamedIsRefused) {
  const ScratchDir dir;
  const ModelConfig config = small_config(nullptr, 3);
  write_checkpoint(dir / "ckpt", config, synthetic_tables(config, RowFormat::bf16, 3), {});
  const auto checkpoint = open_ple_checkpoint(dir / "ckpt", config);
  const Communicators comms(MPI_COMM_SELF, make_topology(1, 0, 1, 1));
  const Steps steps = random_steps(config, 4);
  PleEngine engine(comms, config, *checkpoint, options_for(StorageTier::disk, steps));
  const std::int64_t counts[] = {steps.batches[1].num_tokens()};
  const std::int64_t other[] = {steps.batches[1].num_tokens() + 1};
  (void)engine.forward(steps.batches[0], {}, {&steps.batches[1], counts});
  EXPECT_THROW((void)engine.forward(steps.batches[3]), SystemError);
  EXPECT_THROW((void)engine.forward(steps.batches[1], other), SystemError);
  // The step named is still begun: forwarded as named, it gives its embeddings.
  const StepOutput out = engine.forward(steps.batches[1], counts);
  engine.wait();
  EXPECT_EQ(engine.stats().steps_fetched_ahead, 1);
  expect_output_matches(engine, config, *checkpoint, steps.batches[1], out);
}

TEST(FetchAhead, AFailedReadIsTheStepsItWasFetchedFor) {
  const ScratchDir dir;
  const ModelConfig config = small_config("float8_e4m3fn", 3);
  write_checkpoint(dir / "ckpt", config, synthetic_tables(config, RowFormat::fp8, 3), {});
  const auto checkpoint = open_ple_checkpoint(dir / "ckpt", config);
  const Communicators comms(MPI_COMM_SELF, make_topology(1, 0, 1, 1));
  const Steps steps = random_steps(config, 4);
  FaultPlan faults;
  faults.disk_read_failure = 1;  // the second submit: step 1's, begun inside step 0
  const FaultScope scope(faults);
  PleEngine engine(comms, config, *checkpoint, options_for(StorageTier::disk, steps));
  const StepOutput first = engine.forward(steps.batches[0], {}, {&steps.batches[1], {}});
  engine.wait();
  EXPECT_EQ(engine.stats().steps_fetched_ahead, 1);
  expect_output_matches(engine, config, *checkpoint, steps.batches[0], first);
  try {
    (void)engine.forward(steps.batches[1], {}, {&steps.batches[2], {}});
    ADD_FAILURE() << "the failed read was not reported";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(checkpoint->path() + ": reading a step's rows: Input/output error"),
              std::string::npos)
        << e.what();
  }
  // The steps begun are forgotten: the next one begins afresh, its own batch's embeddings.
  const StepOutput after = engine.forward(steps.batches[3], {}, {});
  engine.wait();
  expect_output_matches(engine, config, *checkpoint, steps.batches[3], after);
}

// Forwards `steps` fetching ahead on an engine of `options`: every step's embeddings are
// one process's, and `ahead` of them were fetched ahead.
void expect_steps_match(const Communicators& comms, const ModelConfig& config, const PleCheckpoint& checkpoint,
                        const EngineOptions& options, const Steps& steps, std::int64_t ahead) {
  PleEngine engine(comms, config, checkpoint, options);
  const StepsRun got = run_steps(engine, steps, true);
  EXPECT_EQ(engine.stats().steps_fetched_ahead, ahead);
  for (std::size_t s = 0; s < steps.batches.size(); ++s) {
    const auto expected = embed_batch(config, checkpoint, steps.batches[s], OutDtype::bf16);
    ASSERT_EQ(got.layers[s].size(), expected.size());
    for (std::size_t d = 0; d < expected.size(); ++d)
      EXPECT_EQ(got.layers[s][d], expected[d].data) << "step " << s << " layer " << d;
  }
}

// Tables behind a row cache, and tables placed on several tiers, fetch ahead where the slow
// tier does: the cache keeps each step's keys until its decode and evicts a way only for a
// fill that runs after it (a cache of few slots, so that every step evicts), and a tier read
// in place beside one that fetches ahead reads copies of the step's ids. On a GPU machine
// the steps run on the GPU.
TEST(FetchAhead, CachedAndPlacedTablesFetchAhead) {
  const ScratchDir dir;
  const ModelConfig config = small_config("float8_e4m3fn", 3);
  write_checkpoint(dir / "ckpt", config, synthetic_tables(config, RowFormat::fp8, 3), {});
  const auto checkpoint = open_ple_checkpoint(dir / "ckpt", config);
  const Communicators comms(MPI_COMM_SELF, make_topology(1, 0, 1, 1));
  const Steps steps = random_steps(config, 7);
  const auto begun = static_cast<std::int64_t>(steps.batches.size()) - 1;
  using enum StorageTier;
  const std::vector<StorageTier> host_and_disk = {host, disk};
  for (const auto& [placement, cache_rows] :
       {std::pair{std::vector<StorageTier>{}, std::int64_t{64}}, std::pair{host_and_disk, std::int64_t{0}},
        std::pair{host_and_disk, std::int64_t{64}}}) {
    SCOPED_TRACE(::testing::Message() << placement.size() << " tables placed, a cache of " << cache_rows << " rows");
    EngineOptions options = options_for(disk, steps);
    options.placement = placement;
    options.cache.rows = cache_rows;
    expect_steps_match(comms, config, *checkpoint, options, steps, begun);
  }
}

TEST(FetchAhead, PinnedStepsMatchOneProcessUnderASlowDecode) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device";
  // Every decode held back 2 ms on the GPU, so that the next step's host gather and copy run
  // while this step's rows wait in their block: a block or key overwritten before its decode
  // shows in the bytes. Rows the host gathers (alone, or beside the GPU) are fetched ahead;
  // small lookups read through UVA in place, keyed by the ids the next hash rewrites, are
  // not. So too behind a row cache of few slots, and beside device tables (read in place
  // from copies of the ids): pinned rows read through UVA fetch nothing ahead there either.
  const PinnedModel model;
  const Steps steps = random_steps(model.config, 7);
  FaultPlan faults;
  faults.decode_delay_us = 2000;
  const FaultScope scope(faults);
  const auto begun = static_cast<std::int64_t>(steps.batches.size()) - 1;
  using enum StorageTier;
  const std::vector<StorageTier> placed = {device, pinned};
  struct Case {
    std::vector<StorageTier> placement;
    std::int64_t cache_rows;
    HostReads reads;
    std::int64_t ahead;
  };
  for (const Case& c :
       {Case{{}, 0, HostReads::gather, begun}, Case{{}, 0, HostReads::both, begun}, Case{{}, 0, HostReads::uva, 0},
        Case{{}, 64, HostReads::gather, begun}, Case{placed, 0, HostReads::gather, begun},
        Case{placed, 64, HostReads::both, begun}, Case{placed, 0, HostReads::uva, 0}}) {
    SCOPED_TRACE(::testing::Message() << c.placement.size() << " tables placed, a cache of " << c.cache_rows
                                      << " rows, " << to_string(c.reads));
    EngineOptions options = options_for(pinned, steps);
    options.placement = c.placement;
    options.cache.rows = c.cache_rows;
    options.host_reads = c.reads;
    expect_steps_match(model.comms, model.config, *model.checkpoint, options, steps, c.ahead);
  }
}

TEST(FetchAhead, AFailedPinnedGatherLeavesNothingForTheNextCaptureToWaitFor) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device";
  // A pinned step begun ahead whose host gather fails once its GPU share is enqueued: the
  // store joins that work into the step's stream at the failure, not at its next submit,
  // which is here the first of a CUDA graph's capture (a capture may not wait for work
  // enqueued before it began); the graph's step then matches one process.
  const PinnedModel model;
  const Steps steps = random_steps(model.config, 4);
  FaultPlan faults;
  faults.host_gather_failure = 1;  // step 1's, begun inside step 0
  const FaultScope scope(faults);
  EngineOptions options = options_for(StorageTier::pinned, steps);
  options.host_reads = HostReads::both;
  PleEngine engine(model.comms, model.config, *model.checkpoint, options);
  (void)engine.forward(steps.batches[0], {}, {&steps.batches[1], {}});
  EXPECT_THROW((void)engine.forward(steps.batches[1], {}, {&steps.batches[3], {}}), SystemError);
  EXPECT_EQ(engine.stats().steps_fetched_ahead, 1);
  engine.use_cuda_graphs(true);
  const StepOutput out = engine.forward(steps.batches[3]);
  engine.wait();
  expect_output_matches(engine, model.config, *model.checkpoint, steps.batches[3], out);
}

// A store that does not fetch ahead (the host tier), and an engine told not to
// (EngineOptions::fetch_ahead) over one that does, run the steps whole, named or not.
TEST(FetchAhead, StoresThatDoNotFetchAheadRunStepsWhole) {
  const ScratchDir dir;
  const ModelConfig config = small_config(nullptr, 3);
  write_checkpoint(dir / "ckpt", config, synthetic_tables(config, RowFormat::bf16, 3), {});
  const auto checkpoint = open_ple_checkpoint(dir / "ckpt", config);
  const Communicators comms(MPI_COMM_SELF, make_topology(1, 0, 1, 1));
  const Steps steps = random_steps(config, 4);
  EngineOptions host = options_for(StorageTier::host, steps);
  EngineOptions disk = options_for(StorageTier::disk, steps);
  disk.fetch_ahead = false;
  for (const EngineOptions& options : {host, disk}) {
    SCOPED_TRACE(to_string(options.tier));
    expect_steps_match(comms, config, *checkpoint, options, steps, 0);
  }
}

}  // namespace
