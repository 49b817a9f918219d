// A model family registered from test files alone (toy_family.cpp) — nothing under lib/
// names it — reads the configs that have its key, is named in messages, reports and outputs, and is served by
// the engine and the batch job: a toy family that is Qwen4Exp under another layers key gives
// the embeddings Qwen4Exp gives for the same config, bit for bit. Runs on 1 and 2 ranks.

#include <gtest/gtest.h>
#include <mpi.h>

#include <nlohmann/json.hpp>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "engine/embed.hpp"
#include "extension/toy_family.hpp"
#include "format/embedding_reader.hpp"
#include "job/batch_job.hpp"
#include "model/model_family.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;
namespace fs = std::filesystem;

using toy_family::ToyFamily;
const ModelFamily k_toy = toy_family::family();

nlohmann::json keys(const char* layers_key) {
  return {{"vocab_size", 1000},   {"eos_token_id", 2},    {"num_hidden_layers", 4},       {"ngram_size", 3},
          {"heads_per_ngram", 2}, {"ple_embed_dim", 128}, {"ngram_vocab_size_base", 500}, {"split_ngram_parts", 5},
          {layers_key, {1, 3}}};
}

TEST(ToyFamily, ReadsItsConfigsAndIsNamedLikeTheBuiltIns) {
  const ModelConfig toy = parse_model_config(keys("toy_layer_ids"), "toy config");
  EXPECT_EQ(toy.family, k_toy);
  EXPECT_STREQ(to_string(toy.family), "toy_ple");
  EXPECT_EQ(toy.ple_layer_ids, (std::vector<int>{1, 3}));
  EXPECT_EQ(parse_model_config(keys("ple_layer_ids"), "qwen config").family, ModelFamily::qwen4exp);
  // Its keys written back are its own.
  nlohmann::json written;
  family_of(toy).write(toy, written);
  EXPECT_TRUE(written.contains("toy_layer_ids"));
  EXPECT_FALSE(written.contains("ple_layer_ids"));
  // One family a config; none found lists every family's key.
  nlohmann::json both = keys("toy_layer_ids");
  both["ple_layer_ids"] = {1};
  EXPECT_THROW((void)parse_model_config(both, "both"), InputError);
  nlohmann::json neither = keys("toy_layer_ids");
  neither.erase("toy_layer_ids");
  try {
    (void)parse_model_config(neither, "neither");
    ADD_FAILURE() << "a config of no family was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("toy_layer_ids (Toy PLE)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("engram_layer_ids (DeepSeek Engram)"), std::string::npos) << e.what();
  }
  // A family's name and key are registered once.
  EXPECT_THROW((void)register_model_family(std::make_unique<ToyFamily>()), InputError);
  EXPECT_THROW((void)register_model_family(std::make_unique<Qwen4ExpFamily>()), InputError);
}

TEST(ToyFamily, TheBatchJobServesItAsItsBaseFamily) {
  int rank = 0;
  int world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const SharedScratchDir dir("pleshard_toy_family");
  const ModelConfig toy = parse_model_config(keys("toy_layer_ids"), "toy config");
  const ModelConfig qwen = parse_model_config(keys("ple_layer_ids"), "qwen config");
  if (rank == 0) {
    write_checkpoint(dir / "toy", toy, synthetic_tables(toy, RowFormat::bf16, 4), {CheckpointKind::safetensors});
    write_checkpoint(dir / "qwen", qwen, synthetic_tables(qwen, RowFormat::bf16, 4), {CheckpointKind::safetensors});
  }
  MPI_Barrier(MPI_COMM_WORLD);
  SyntheticRequestsSpec spec;
  spec.count = 6;
  spec.min_tokens = 1;
  spec.max_tokens = 40;
  spec.vocab_size = qwen.vocab_size;
  spec.seed = 3;
  const auto requests = make_synthetic_requests(spec);
  std::vector<LayerEmbeddings> expected;
  if (rank == 0) {
    const auto serial = open_ple_checkpoint(dir / "qwen", qwen);
    TokenBatch whole(qwen.ngram_size);
    for (const auto& r : requests) whole.add_request(r.tokens, fresh_context(qwen.ngram_size));
    expected = embed_batch(qwen, *serial, whole, OutDtype::bf16);
  }
  const auto checkpoint = open_ple_checkpoint(dir / "toy", toy, {});
  const Communicators comms(MPI_COMM_WORLD, make_topology(world, rank, 1, world));
  BatchJobOptions options;
  options.schedule = {16, 2};
  options.storage = StorageTier::host;
  options.out = dir / "out.h5";
  const BatchJobReport report = run_batch_job(comms, toy, *checkpoint, requests, options);
  EXPECT_GT(report.tokens, 0);
  if (rank == 0) {
    const EmbeddingFile got = read_embeddings_h5(options.out, toy.num_ple_layers(), OutDtype::bf16);
    ASSERT_EQ(got.layers.size(), expected.size());
    for (std::size_t d = 0; d < got.layers.size(); ++d)
      EXPECT_TRUE(got.layers[d] == expected[d].data) << "layer " << d << " differs";
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
