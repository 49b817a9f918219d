// A step begun inside the one before (NextStep: its rows fetched while that step is
// decoded). On the disk tier, from safetensors (read on the store's thread) and HDF5 (read
// in submit itself): every step's embeddings are bit for bit those of one process hashing
// and looking up on the host, as are the same steps forwarded one at a time, and every step
// after the first was begun ahead. A batch other than the one named next is refused. A read
// that fails in a fetch begun ahead is reported by the step it belongs to, not by the step
// it was begun in. A store that does not fetch ahead (the host tier) runs the steps whole.
// On a GPU machine the disk tier's steps run on the GPU, else on the host.

#include <gtest/gtest.h>

#include <random>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "engine/embed.hpp"
#include "engine/ple_engine.hpp"
#include "hash/random_batches.hpp"

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

EngineOptions options_for(StorageTier tier, const Steps& steps) {
  EngineOptions options;
  options.tier = tier;
  options.max_tokens = steps.most_tokens;
  return options;
}

// Each step's embeddings of every layer, on the host; forwarded with their successor named
// where `ahead`.
std::vector<std::vector<std::vector<std::uint8_t>>> run_steps(PleEngine& engine, const Steps& steps, bool ahead) {
  std::vector<std::vector<std::vector<std::uint8_t>>> out;
  for (std::size_t s = 0; s < steps.batches.size(); ++s) {
    NextStep next;
    if (ahead && s + 1 < steps.batches.size()) next.batch = &steps.batches[s + 1];
    const StepOutput step = engine.forward(steps.batches[s], {}, next);
    engine.wait();
    auto& layers = out.emplace_back();
    for (const EmbeddingView& view : step.layers) layers.push_back(to_host(engine.space(), view));
  }
  return out;
}

class FaultScope {
 public:
  explicit FaultScope(const FaultPlan& plan) { set_fault_plan(plan); }
  ~FaultScope() { set_fault_plan({}); }
  FaultScope(const FaultScope&) = delete;
  FaultScope& operator=(const FaultScope&) = delete;
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
    const auto got = run_steps(ahead, steps, true);
    EXPECT_EQ(ahead.stats().steps_begun_ahead, static_cast<std::int64_t>(steps.batches.size()) - 1);
    PleEngine alone(comms, config, *checkpoint, options_for(StorageTier::disk, steps));
    const auto plain = run_steps(alone, steps, false);
    EXPECT_EQ(alone.stats().steps_begun_ahead, 0);
    for (std::size_t s = 0; s < steps.batches.size(); ++s) {
      const auto expected = embed_batch(config, *checkpoint, steps.batches[s], OutDtype::bf16);
      ASSERT_EQ(got[s].size(), expected.size());
      for (std::size_t d = 0; d < expected.size(); ++d) {
        EXPECT_EQ(got[s][d], expected[d].data) << "step " << s << " layer " << d;
        EXPECT_EQ(plain[s][d], expected[d].data) << "step " << s << " layer " << d;
      }
    }
    // The ahead engine's steps' times settle in order, one a step.
    EXPECT_EQ(ahead.stats().step_seconds.size(), steps.batches.size());
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
  (void)engine.forward(steps.batches[0], {}, {&steps.batches[1], {}});
  EXPECT_THROW((void)engine.forward(steps.batches[3]), SystemError);
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
  EXPECT_EQ(engine.stats().steps_begun_ahead, 1);
  const auto expected = embed_batch(config, *checkpoint, steps.batches[0], OutDtype::bf16);
  for (std::size_t d = 0; d < expected.size(); ++d)
    EXPECT_EQ(to_host(engine.space(), first.layers[d]), expected[d].data) << "layer " << d;
  try {
    (void)engine.forward(steps.batches[1], {}, {&steps.batches[2], {}});
    ADD_FAILURE() << "the failed read was not reported";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(checkpoint->path() + ": reading a step's rows: Input/output error"),
              std::string::npos)
        << e.what();
  }
}

TEST(FetchAhead, StoresThatDoNotFetchAheadRunStepsWhole) {
  const ModelConfig config = small_config(nullptr, 3);
  const auto checkpoint = synthetic_checkpoint(config, RowFormat::bf16, 3);
  const Communicators comms(MPI_COMM_SELF, make_topology(1, 0, 1, 1));
  const Steps steps = random_steps(config, 4);
  PleEngine engine(comms, config, *checkpoint, options_for(StorageTier::host, steps));
  const auto got = run_steps(engine, steps, true);
  EXPECT_EQ(engine.stats().steps_begun_ahead, 0);
  for (std::size_t s = 0; s < steps.batches.size(); ++s) {
    const auto expected = embed_batch(config, *checkpoint, steps.batches[s], OutDtype::bf16);
    for (std::size_t d = 0; d < expected.size(); ++d) EXPECT_EQ(got[s][d], expected[d].data) << "step " << s;
  }
}

}  // namespace
