// Config defaults, text_config lookup, and one test per rejection (docs/design.md §1).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "model/model_config.hpp"
#include "model/table_spec.hpp"

namespace {

using nlohmann::json;
using pleshard::InputError;
using pleshard::ModelConfig;
using pleshard::parse_model_config;

json minimal() {
  return {{"vocab_size", 151936},
          {"eos_token_id", 151643},
          {"num_hidden_layers", 8},
          {"hidden_size", 2048},
          {"ple_layer_ids", {5, 2, 5}}};
}

// The message must name the source file, the key and the offending value.
void expect_rejected(const json& document, const std::string& key, const std::string& value) {
  try {
    (void)parse_model_config(document, "cfg.json");
    ADD_FAILURE() << "accepted: " << document.dump();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("cfg.json: ", 0), 0u) << message;
    EXPECT_NE(message.find(key), std::string::npos) << message;
    EXPECT_NE(message.find(value), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
  }
}

json with(json document, const std::string& key, const json& value) {
  document[key] = value;
  return document;
}

TEST(ModelConfig, Defaults) {
  const ModelConfig c = parse_model_config(minimal(), "cfg.json");
  EXPECT_EQ(c.vocab_size, 151936);
  EXPECT_EQ(c.eos_token_id, 151643);
  EXPECT_EQ(c.ngram_size, 3);
  EXPECT_EQ(c.heads_per_ngram, 8);
  EXPECT_EQ(c.total_heads(), 16);
  EXPECT_EQ(c.ple_embed_dim, 2048);  // from hidden_size
  EXPECT_EQ(c.head_dim(), 128);
  EXPECT_EQ(c.ngram_vocab_size_base, 20'000'000);
  EXPECT_EQ(c.vocab_size_divisor, 128);
  EXPECT_EQ(c.split_ngram_parts, 512);
  EXPECT_EQ(c.seed, 1234);
  EXPECT_EQ(c.ple_layer_ids, (std::vector<int>{2, 5}));  // sorted, unique
  EXPECT_EQ(c.num_ple_layers(), 2);
  EXPECT_EQ(c.quantization, pleshard::TableQuantization::none);
}

TEST(ModelConfig, ReadsTextConfigBeforeTheTopLevel) {
  json document = {{"vocab_size", 1}, {"text_config", minimal()}};
  document["text_config"]["ple_embed_dim"] = 2560;
  document["text_config"]["ple_embedding_dtype"] = "nvfp4";
  document["text_config"]["eos_token_id"] = json::array({7, 8});
  const ModelConfig c = parse_model_config(document, "cfg.json");
  EXPECT_EQ(c.vocab_size, 151936);
  EXPECT_EQ(c.ple_embed_dim, 2560);
  EXPECT_EQ(c.eos_token_id, 7);
  EXPECT_EQ(c.quantization, pleshard::TableQuantization::nvfp4);
}

TEST(ModelConfig, TopLevelKeysFillWhatTextConfigLacks) {
  json document = {{"text_config", {{"vocab_size", 100}}},
                   {"eos_token_id", 3},
                   {"num_hidden_layers", 2},
                   {"ple_embed_dim", 32},
                   {"ple_layer_ids", {1}},
                   {"ple_embedding_dtype", "float8_e4m3fn"}};
  const ModelConfig c = parse_model_config(document, "cfg.json");
  EXPECT_EQ(c.vocab_size, 100);
  EXPECT_EQ(c.quantization, pleshard::TableQuantization::fp8);
}

TEST(ModelConfigRejects, NgramSizeBelowTwo) { expect_rejected(with(minimal(), "ngram_size", 1), "ngram_size", "1"); }
TEST(ModelConfigRejects, NgramSizeAboveKernelLimit) {
  expect_rejected(with(minimal(), "ngram_size", 17), "ngram_size", "17");
}
TEST(ModelConfigRejects, NonPositiveHeads) {
  expect_rejected(with(minimal(), "heads_per_ngram", 0), "heads_per_ngram", "0");
}
TEST(ModelConfigRejects, TooManyHeads) {
  expect_rejected(with(minimal(), "heads_per_ngram", 65), "heads_per_ngram", "65");
}
TEST(ModelConfigRejects, EmbedDimNotDivisibleByHeads) {
  expect_rejected(with(minimal(), "ple_embed_dim", 100), "ple_embed_dim", "100");
}
TEST(ModelConfigRejects, NonPositiveEmbedDim) {
  expect_rejected(with(minimal(), "ple_embed_dim", -16), "ple_embed_dim", "-16");
}
TEST(ModelConfigRejects, MissingEmbedDimAndHiddenSize) {
  json document = minimal();
  document.erase("hidden_size");
  expect_rejected(document, "ple_embed_dim", "missing");
}
TEST(ModelConfigRejects, NonPositiveBase) {
  expect_rejected(with(minimal(), "ngram_vocab_size_base", 0), "ngram_vocab_size_base", "0");
}
TEST(ModelConfigRejects, NonPositiveDivisor) {
  expect_rejected(with(minimal(), "make_ngram_vocab_size_divisible_by", -128), "make_ngram_vocab_size_divisible_by",
                  "-128");
}
TEST(ModelConfigRejects, NonPositiveSplitParts) {
  expect_rejected(with(minimal(), "split_ngram_parts", 0), "split_ngram_parts", "0");
}
TEST(ModelConfigRejects, LayerIdZero) {
  expect_rejected(with(minimal(), "ple_layer_ids", {0, 1}), "ple_layer_ids", "entry 0");
}
TEST(ModelConfigRejects, LayerIdPastLastLayer) {
  expect_rejected(with(minimal(), "ple_layer_ids", {9}), "ple_layer_ids", "entry 9");
}
TEST(ModelConfigRejects, EmptyLayerIds) {
  expect_rejected(with(minimal(), "ple_layer_ids", json::array()), "ple_layer_ids", "[]");
}
TEST(ModelConfigRejects, MissingLayerIds) {
  json document = minimal();
  document.erase("ple_layer_ids");
  expect_rejected(document, "ple_layer_ids", "missing");
}
TEST(ModelConfigRejects, Nvfp4WithHeadDimNotMultipleOf16) {
  json document = with(minimal(), "ple_embedding_dtype", "nvfp4");
  document["ple_embed_dim"] = 16 * 8;  // head_dim 8
  expect_rejected(document, "ple_embedding_dtype", "8");
}
TEST(ModelConfigRejects, UnknownDtype) {
  expect_rejected(with(minimal(), "ple_embedding_dtype", "int4"), "ple_embedding_dtype", "int4");
}
TEST(ModelConfigRejects, DtypeNotAString) {
  expect_rejected(with(minimal(), "ple_embedding_dtype", 8), "ple_embedding_dtype", "8");
}
TEST(ModelConfigRejects, MissingVocabSize) {
  json document = minimal();
  document.erase("vocab_size");
  expect_rejected(document, "vocab_size", "missing");
}
TEST(ModelConfigRejects, NonPositiveVocabSize) { expect_rejected(with(minimal(), "vocab_size", 0), "vocab_size", "0"); }
TEST(ModelConfigRejects, VocabSizeNotAnInteger) {
  expect_rejected(with(minimal(), "vocab_size", "big"), "vocab_size", "\"big\"");
}
TEST(ModelConfigRejects, VocabSizeFractional) {
  expect_rejected(with(minimal(), "vocab_size", 1.5), "vocab_size", "1.5");
}
TEST(ModelConfigRejects, MissingEos) {
  json document = minimal();
  document.erase("eos_token_id");
  expect_rejected(document, "eos_token_id", "missing");
}
TEST(ModelConfigRejects, EmptyEosList) {
  expect_rejected(with(minimal(), "eos_token_id", json::array()), "eos_token_id", "[]");
}
TEST(ModelConfigRejects, NegativeEos) { expect_rejected(with(minimal(), "eos_token_id", -1), "eos_token_id", "-1"); }
TEST(ModelConfigRejects, MissingLayerCount) {
  json document = minimal();
  document.erase("num_hidden_layers");
  expect_rejected(document, "num_hidden_layers", "missing");
}
TEST(ModelConfigRejects, TextConfigNotAnObject) {
  expect_rejected(with(minimal(), "text_config", 3), "text_config", "3");
}
TEST(ModelConfigRejects, IntegerTooLarge) {
  expect_rejected(with(minimal(), "seed", 18446744073709551615ull), "seed", "18446744073709551615");
}
TEST(ModelConfigRejects, NotAnObject) {
  EXPECT_THROW((void)parse_model_config(json::array({1, 2}), "cfg.json"), InputError);
}

TEST(ModelConfigFile, MissingFileAndBadJsonNameTheFile) {
  const auto dir = std::filesystem::temp_directory_path() / "pleshard_test_config";
  std::filesystem::create_directories(dir);
  const auto path = dir / "broken.json";
  std::ofstream(path) << "{\"vocab_size\": 3,";
  for (const auto& p : {path, dir / "absent.json"}) {
    try {
      (void)pleshard::load_model_config(p);
      ADD_FAILURE() << "accepted " << p;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(p.string() + ": ", 0), 0u) << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(ModelConfigFile, RoundTripsThroughToJson) {
  json document = with(minimal(), "ple_embedding_dtype", "float8_e4m3fn");
  const ModelConfig c = parse_model_config(document, "cfg.json");
  const ModelConfig again = parse_model_config(pleshard::to_json(c), "again");
  EXPECT_EQ(pleshard::to_json(again), pleshard::to_json(c));
}

}  // namespace

namespace {

// Values whose arithmetic would overflow or wrap further on are refused where they are read.
TEST(ModelConfig, EosOutsideTheVocabulary) {
  expect_rejected(with(minimal(), "eos_token_id", 151936), "eos_token_id", "below vocab_size");
}

TEST(ModelConfig, RowsTooWideForTheArithmetic) {
  // 16 heads: head_dim 2^40, and 2^32 + 16 (which an int would see as 16).
  expect_rejected(with(minimal(), "ple_embed_dim", std::int64_t{16} << 40), "ple_embed_dim", "more than the supported");
  expect_rejected(with(minimal(), "ple_embed_dim", 16 * ((std::int64_t{1} << 32) + 16)), "ple_embed_dim",
                  "more than the supported");
}

TEST(ModelConfig, SplitPartsBeyondAnyLayout) {
  expect_rejected(with(minimal(), "split_ngram_parts", std::numeric_limits<std::int64_t>::max()), "split_ngram_parts",
                  "must be at most");
  expect_rejected(with(minimal(), "split_ngram_parts", std::int64_t{1'000'000'000'000}), "split_ngram_parts",
                  "must be at most");
}

TEST(ModelConfig, BaseBeyondTheHeadArithmetic) {
  expect_rejected(with(minimal(), "ngram_vocab_size_base", (std::int64_t{1} << 62) + 1), "ngram_vocab_size_base",
                  "at most 2^62");
}

}  // namespace

#include "model/table_spec.hpp"

namespace {

// Padding a table to a huge divisor would wrap to 0 rows: refused when the spec is derived,
// naming the file and the key.
TEST(ModelConfig, DivisorThatWouldWrapThePadding) {
  const ModelConfig c = parse_model_config(
      with(minimal(), "make_ngram_vocab_size_divisible_by", std::numeric_limits<std::int64_t>::max()), "cfg.json");
  try {
    (void)pleshard::derive_table_specs(c);
    ADD_FAILURE() << "derived";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cfg.json: make_ngram_vocab_size_divisible_by"), std::string::npos)
        << e.what();
  }
}

}  // namespace

namespace {

// A table whose bytes would not fit 64-bit sizes (2^62 base x 16 heads of 160 values).
TEST(ModelConfig, TableBytesBeyondTheArithmetic) {
  const ModelConfig c = parse_model_config(with(minimal(), "ngram_vocab_size_base", std::int64_t{1} << 58), "cfg.json");
  try {
    (void)pleshard::derive_table_specs(c);
    ADD_FAILURE() << "derived";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cfg.json: ngram_vocab_size_base"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("more than 2^62 bytes"), std::string::npos) << e.what();
  }
}

}  // namespace

// DeepSeek Engram configs (docs/design.md §10).
namespace {

json engram() {
  return {{"vocab_size", 129280},          {"image_token_id", 129264}, {"engram_layer_ids", {14, 1}},
          {"engram_max_ngram_size", 4},    {"engram_n_heads", 8},      {"engram_head_dim", 256},
          {"engram_vocab_size", 16000000}, {"engram_pad_token_id", 2}, {"engram_compressed_vocab_size", 99092}};
}

TEST(EngramConfig, ShapeAndKeys) {
  const ModelConfig c = parse_model_config(engram(), "cfg.json");
  EXPECT_EQ(c.family, pleshard::ModelFamily::deepseek_engram);
  EXPECT_EQ(c.ple_layer_ids, (std::vector<int>{14, 1}));  // 0-based, in config order
  EXPECT_EQ(c.total_heads(), 24);
  EXPECT_EQ(c.head_dim(), 256);
  EXPECT_EQ(c.ple_embed_dim, 6144);
  EXPECT_EQ(c.engram.vocab_sizes, (std::vector<std::int64_t>{16000000}));
  EXPECT_EQ(c.engram.compressed_vocab, 99092);
  EXPECT_EQ(c.engram.image_token_id, 129264);
  EXPECT_EQ(c.quantization, pleshard::TableQuantization::fp8_e8m0);
  // Written back canonically, read again alike.
  const ModelConfig again = parse_model_config(pleshard::to_json(c), "again");
  EXPECT_EQ(pleshard::to_json(again), pleshard::to_json(c));
}

TEST(EngramConfig, Refusals) {
  expect_rejected(with(engram(), "engram_layer_ids", json::array()), "engram_layer_ids", "[]");
  expect_rejected(with(engram(), "engram_layer_ids", {1, 1}), "engram_layer_ids", "twice");
  expect_rejected(with(engram(), "engram_layer_ids", {-1}), "engram_layer_ids", "-1");
  expect_rejected(with(engram(), "engram_max_ngram_size", 1), "engram_max_ngram_size", "1");
  expect_rejected(with(engram(), "engram_n_heads", 0), "engram_n_heads", "0");
  expect_rejected(with(engram(), "engram_head_dim", 48), "engram_head_dim", "multiple of 32");
  expect_rejected(with(engram(), "engram_vocab_size", {1, 2}), "engram_vocab_size", "one size per order");
  expect_rejected(with(engram(), "engram_vocab_size", 0), "engram_vocab_size", "1..2^62");
  expect_rejected(with(engram(), "engram_pad_token_id", 129280), "engram_pad_token_id", "below vocab_size");
  expect_rejected(with(engram(), "engram_compressed_vocab_size", 200000), "engram_compressed_vocab_size", "200000");
  expect_rejected(with(engram(), "image_token_id", -3), "image_token_id", "-3");
  json both = engram();
  both["ple_layer_ids"] = {1};
  try {
    (void)parse_model_config(both, "cfg.json");
    ADD_FAILURE() << "a config of two families accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has both ple_layer_ids and engram_layer_ids"), std::string::npos);
  }
}

// The released model's config: engram_num_embeddings agree with the rows the heads derive.
TEST(EngramConfig, TheReleasedConfigsRowsAreChecked) {
  const ModelConfig c = pleshard::load_model_config(std::filesystem::path(PLESHARD_SOURCE_DIR) /
                                                    "jobs/models/deepseek-v4.1-flash/config.json");
  const auto specs = pleshard::derive_table_specs(c);
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].padded_rows, 384006168);
  EXPECT_EQ(specs[1].padded_rows, 384016682);
  ModelConfig wrong = c;
  wrong.engram.num_embeddings = {384006168, 1};
  EXPECT_THROW((void)pleshard::derive_table_specs(wrong), InputError);
}

}  // namespace

namespace {

// Each family says which decoder layer reads each table, 0-based whatever its config's ids:
// Qwen4Exp's are 1-based (sorted), Engram's 0-based (in config order).
TEST(TableSpec, TheDecoderLayerThatReadsATableCountsFromZeroInEveryFamily) {
  const auto read_at = [](const ModelConfig& c) {
    std::vector<int> layers;
    for (const auto& spec : pleshard::derive_table_specs(c)) layers.push_back(spec.read_at_layer);
    return layers;
  };
  EXPECT_EQ(read_at(parse_model_config(minimal(), "cfg.json")), (std::vector<int>{1, 4}));  // ple_layer_ids 5, 2
  EXPECT_EQ(read_at(parse_model_config(engram(), "cfg.json")), (std::vector<int>{14, 1}));  // engram_layer_ids 14, 1
  const std::filesystem::path models = std::filesystem::path(PLESHARD_SOURCE_DIR) / "jobs/models";
  EXPECT_EQ(read_at(pleshard::load_model_config(models / "qwen3.8-flash-next/config.json")), (std::vector<int>{1}));
  EXPECT_EQ(read_at(pleshard::load_model_config(models / "deepseek-v4.1-flash/config.json")),
            (std::vector<int>{1, 14}));
}

}  // namespace
