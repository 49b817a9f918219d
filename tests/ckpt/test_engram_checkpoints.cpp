// DeepSeek Engram tables in checkpoints: written whole under the released names and read
// back from any prefix and any file beside the rest of a model's tensors; both layouts give
// the same rows; every malformed table is refused in one line naming the file and tensor;
// rows whose values other stacks decode differently are counted.

#include <gtest/gtest.h>

#include <fstream>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/ple_checkpoint.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "format/row_anomalies.hpp"
#include "model/table_spec.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;
namespace fs = std::filesystem;
using nlohmann::json;

struct TableBytes {
  std::vector<std::uint8_t> rows;
  std::vector<std::uint8_t> scales;
  bool operator==(const TableBytes&) const = default;
};

TableBytes all_rows(const PleCheckpoint& checkpoint, int d) {
  const TableLayout& layout = checkpoint.table(d).layout;
  TableBytes t;
  t.rows.resize(static_cast<std::size_t>(layout.rows) * layout.row_bytes());
  t.scales.resize(static_cast<std::size_t>(layout.rows) * layout.scale_bytes());
  checkpoint.read_rows(d, 0, layout.rows, t.rows, t.scales);
  return t;
}

TableBytes source_rows(const TableSource& source) {
  const TableLayout& layout = source.info.layout;
  TableBytes t;
  t.rows.resize(static_cast<std::size_t>(layout.rows) * layout.row_bytes());
  t.scales.resize(static_cast<std::size_t>(layout.rows) * layout.scale_bytes());
  source.rows(0, layout.rows, t.rows, t.scales);
  return t;
}

class EngramCheckpoint : public ::testing::Test {
 protected:
  // The tensors of a valid one-file checkpoint of `format`.
  RawTensors valid(RowFormat format = RowFormat::fp8_e8m0) {
    write_checkpoint(dir_ / "valid", config_, synthetic_tables(config_, format, 5), {});
    return read_raw(dir_ / "valid" / "model.safetensors");
  }

  void expect_rejected(const RawTensors& tensors, const std::string& tensor, const std::string& problem) {
    const fs::path path = dir_ / "bad.safetensors";
    write_raw(path, tensors);
    try {
      (void)open_ple_checkpoint(path, config_);
      ADD_FAILURE() << "accepted a checkpoint that should fail with: " << problem;
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(path.string()), std::string::npos) << message;
      EXPECT_NE(message.find(tensor), std::string::npos) << message;
      EXPECT_NE(message.find(problem), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }

  ScratchDir dir_;
  ModelConfig config_ = engram_config();
  const std::string w1_ = "model.layers.1.engram.embed.weight";
  const std::string s1_ = "model.layers.1.engram.embed.scale";
};

TEST_F(EngramCheckpoint, WrittenWholeUnderTheReleasedNamesWithE8m0Scales) {
  const RawTensors raw = valid();
  const auto specs = derive_table_specs(config_);
  ASSERT_EQ(raw.size(), 4U);  // no hash buffers, no global scale
  for (const auto& spec : specs) {
    const std::string stem = "model.layers." + std::to_string(spec.decoder_layer) + ".engram.embed.";
    ASSERT_TRUE(raw.contains(stem + "weight"));
    ASSERT_TRUE(raw.contains(stem + "scale"));
    EXPECT_EQ(raw.at(stem + "weight").dtype, "F8_E4M3");
    EXPECT_EQ(raw.at(stem + "weight").shape, (std::vector<std::int64_t>{spec.logical_rows, 64}));
    EXPECT_EQ(raw.at(stem + "scale").dtype, "F8_E8M0");
    EXPECT_EQ(raw.at(stem + "scale").shape, (std::vector<std::int64_t>{spec.logical_rows, 2}));
  }
}

TEST_F(EngramCheckpoint, BothLayoutsHoldTheSourceRowsAndConvertBackByteForByte) {
  const auto tables = synthetic_tables(config_, RowFormat::fp8_e8m0, 5);
  write_checkpoint(dir_ / "st", config_, tables, {});
  WriteOptions h5;
  h5.kind = CheckpointKind::hdf5;
  write_checkpoint(dir_ / "c.h5", config_, tables, h5);
  const auto st = open_ple_checkpoint(dir_ / "st", config_);
  const auto hdf5 = open_ple_checkpoint(dir_ / "c.h5", config_);
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(st->table(d).layout.format, RowFormat::fp8_e8m0);
    EXPECT_EQ(hdf5->table(d).layout.format, RowFormat::fp8_e8m0);
    const TableBytes expected = source_rows(tables[static_cast<std::size_t>(d)]);
    EXPECT_EQ(all_rows(*st, d), expected) << "table " << d;
    EXPECT_EQ(all_rows(*hdf5, d), expected) << "table " << d;
  }
  write_checkpoint(dir_ / "back", config_, checkpoint_tables(*hdf5), {});
  EXPECT_EQ(read_raw(dir_ / "back" / "model.safetensors"), read_raw(dir_ / "st" / "model.safetensors"));
}

TEST_F(EngramCheckpoint, FoundUnderAnyPrefixInAnyFileBesideUnrelatedTensors) {
  const RawTensors raw = valid();
  // The released layout: each layer's tensors in another file of the index, under the
  // model's own prefix, beside attention weights and a layer the config does not name.
  RawTensors first;
  RawTensors second;
  first["language_model.layers.1.engram.embed.weight"] = raw.at(w1_);
  first["language_model.layers.1.engram.embed.scale"] = raw.at(s1_);
  first["language_model.layers.1.attn.wq.weight"] = {"BF16", {4, 4}, std::vector<std::uint8_t>(32, 1)};
  second["layers.3.engram.embed.weight"] = raw.at("model.layers.3.engram.embed.weight");
  second["layers.3.engram.embed.scale"] = raw.at("model.layers.3.engram.embed.scale");
  second["layers.13.engram.embed.weight"] = {"U8", {2, 2}, std::vector<std::uint8_t>(4, 0)};
  second["vision.sublayers.3.engram.embed.weight"] = {"U8", {2, 2}, std::vector<std::uint8_t>(4, 0)};
  const fs::path dir = dir_ / "released";
  fs::create_directories(dir);
  write_raw(dir / "model-00001-of-00002.safetensors", first);
  write_raw(dir / "model-00002-of-00002.safetensors", second);
  json map = json::object();
  for (const auto& [name, t] : first) map[name] = "model-00001-of-00002.safetensors";
  for (const auto& [name, t] : second) map[name] = "model-00002-of-00002.safetensors";
  std::ofstream(dir / "model.safetensors.index.json") << json{{"weight_map", map}}.dump();

  const auto released = open_ple_checkpoint(dir, config_);
  const auto written = open_ple_checkpoint(dir_ / "valid", config_);
  for (int d = 0; d < 2; ++d) EXPECT_EQ(all_rows(*released, d), all_rows(*written, d)) << "table " << d;
}

TEST_F(EngramCheckpoint, Bf16TablesNeedNoScales) {
  const RawTensors raw = valid(RowFormat::bf16);
  EXPECT_EQ(raw.at(w1_).dtype, "BF16");
  EXPECT_FALSE(raw.contains(s1_));
  const auto checkpoint = open_ple_checkpoint(dir_ / "valid", config_);
  EXPECT_EQ(checkpoint->table(0).layout.format, RowFormat::bf16);
}

TEST_F(EngramCheckpoint, ScaleMissing) {
  RawTensors raw = valid();
  raw.erase(s1_);
  expect_rejected(raw, w1_, "without their layers.1.engram.embed.scale");
}

TEST_F(EngramCheckpoint, ScaleOfTheWrongShape) {
  RawTensors raw = valid();
  raw.at(s1_).shape[1] = 4;
  raw.at(s1_).bytes.resize(raw.at(s1_).bytes.size() * 2);
  expect_rejected(raw, s1_, "expected [");
}

TEST_F(EngramCheckpoint, ScaleOfTheWrongDtype) {
  RawTensors raw = valid();
  raw.at(s1_).dtype = "F8_E4M3";
  expect_rejected(raw, s1_, "expected F8_E8M0");
}

TEST_F(EngramCheckpoint, WeightOfTheWrongDtype) {
  RawTensors raw = valid();
  raw.at(w1_).dtype = "I8";
  expect_rejected(raw, w1_, "dtype I8");
}

TEST_F(EngramCheckpoint, ScalesBesideBf16Rows) {
  RawTensors raw = valid(RowFormat::bf16);
  raw[s1_] = valid().at(s1_);
  expect_rejected(raw, s1_, "block scales beside bf16 rows");
}

TEST_F(EngramCheckpoint, TwoTensorsForOneLayer) {
  RawTensors raw = valid();
  raw["other.layers.1.engram.embed.weight"] = raw.at(w1_);
  expect_rejected(raw, "layers.1.engram.embed.weight", "a second Engram weight tensor for decoder layer 1");
}

TEST_F(EngramCheckpoint, RowsNotTheDerivedOnes) {
  RawTensors raw = valid();
  RawTensor& w = raw.at(w1_);
  w.shape[0] -= 1;
  w.bytes.resize(w.bytes.size() - 64);
  expect_rejected(raw, w1_, "expected [" + std::to_string(derive_table_spec(config_, 0).logical_rows) + ", 64]");
}

TEST_F(EngramCheckpoint, NoTensorForALayer) {
  RawTensors raw = valid();
  raw.erase(w1_);
  raw.erase(s1_);
  expect_rejected(raw, "layers.1.engram.embed.weight", "no tensor ending in");
}

TEST_F(EngramCheckpoint, VerifyCountsRowsOtherStacksDecodeDifferently) {
  RawTensors raw = valid();
  // Row 3: a NaN code; row 5: scale byte 0; row 8: scale byte 255 and a NaN code.
  RawTensor& w = raw.at(w1_);
  RawTensor& s = raw.at(s1_);
  w.bytes[3 * 64 + 10] = 0x7F;
  s.bytes[5 * 2 + 1] = 0;
  s.bytes[8 * 2] = 255;
  w.bytes[8 * 64] = 0xFF;
  write_raw(dir_ / "odd.safetensors", raw);
  const auto checkpoint = open_ple_checkpoint(dir_ / "odd.safetensors", config_);
  const auto found = checkpoint->verify_data({});
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(found[0].rows, checkpoint->table(0).layout.rows);
  EXPECT_EQ(found[0].nan_code_rows, 2);
  EXPECT_EQ(found[0].zero_scale_rows, 1);
  EXPECT_EQ(found[0].nan_scale_rows, 1);
  EXPECT_EQ(found[0].first_row, 3);
  EXPECT_EQ(found[0].summary(), "2 rows with NaN codes, 1 with scale byte 0, 1 with NaN scales (first: row 3)");
  EXPECT_FALSE(found[1].any());
  // A sample of every row finds the same; one of the first and last rows only, none here.
  const auto sampled = checkpoint->sample_anomalies(checkpoint->table(0).layout.rows);
  EXPECT_EQ(sampled[0].nan_code_rows, 2);
  EXPECT_FALSE(checkpoint->sample_anomalies(2)[0].any());
}

TEST(RowAnomalies, NanCodesOfEveryFormatAndScalesOfEveryCode) {
  const auto scan = [](RowFormat format, std::vector<std::uint8_t> rows, std::vector<std::uint8_t> scales = {}) {
    return scan_rows({format, 32, 1}, 0, 1, rows, scales);
  };
  std::vector<std::uint8_t> zero(64, 0);
  EXPECT_FALSE(scan(RowFormat::bf16, zero).any());
  std::vector<std::uint8_t> bf16 = zero;
  bf16[1] = 0x7F;  // 0x7F80: +inf, not NaN
  bf16[0] = 0x80;
  EXPECT_FALSE(scan(RowFormat::bf16, bf16).any());
  bf16[0] = 0x81;  // 0x7F81: NaN
  EXPECT_EQ(scan(RowFormat::bf16, bf16).nan_code_rows, 1);
  std::vector<std::uint8_t> f16 = zero;
  f16[2] = 0x01;
  f16[3] = 0xFC;  // 0xFC01: NaN
  EXPECT_EQ(scan(RowFormat::f16, f16).nan_code_rows, 1);
  std::vector<std::uint8_t> fp8(32, 0x7E);  // 448: the largest finite E4M3
  EXPECT_FALSE(scan(RowFormat::fp8, fp8).any());
  fp8[31] = 0xFF;
  EXPECT_EQ(scan(RowFormat::fp8, fp8).nan_code_rows, 1);
  // E8M0: 0 and 255 are what other stacks read differently; 1 and 254 are plain.
  const std::vector<std::uint8_t> codes(32, 0x38);
  EXPECT_FALSE(scan(RowFormat::fp8_e8m0, codes, {1}).any());
  EXPECT_FALSE(scan(RowFormat::fp8_e8m0, codes, {254}).any());
  EXPECT_EQ(scan(RowFormat::fp8_e8m0, codes, {0}).zero_scale_rows, 1);
  EXPECT_EQ(scan(RowFormat::fp8_e8m0, codes, {255}).nan_scale_rows, 1);
  // NVFP4's E4M3 block scales: NaN at 0x7F, and 0 is a plain zero.
  const std::vector<std::uint8_t> fp4(16, 0x77);
  EXPECT_FALSE(scan(RowFormat::nvfp4, fp4, {0, 0x38}).any());
  EXPECT_EQ(scan(RowFormat::nvfp4, fp4, {0x7F, 0x38}).nan_scale_rows, 1);
}

}  // namespace

#include "io/npy_array.hpp"

namespace {

// The token map a checkpoint carries is part of what it is: the same rows with another map
// beside them (a directory) or inside them (HDF5) are another checkpoint to a job's resume.
TEST(EngramCheckpointIdentity, TheMapItCarriesIsPartOfIt) {
  using namespace pleshard::testing_support;
  const ScratchDir dir;
  const ModelConfig config = engram_config(700);
  const auto tables = synthetic_tables(config, RowFormat::fp8_e8m0, 5);
  WriteOptions h5;
  h5.kind = CheckpointKind::hdf5;
  write_checkpoint(dir / "st", config, tables, {});
  write_checkpoint(dir / "a.h5", config, tables, h5);
  const std::uint64_t st = open_ple_checkpoint(dir / "st", config)->content_identity();
  const std::uint64_t a = open_ple_checkpoint(dir / "a.h5", config)->content_identity();
  // Another map of the same vocabularies: two entries swapped.
  std::vector<std::int64_t> other(config.token_map->ids().begin(), config.token_map->ids().end());
  std::swap(other[5], other[6]);
  ModelConfig with_other = config;
  with_other.token_map =
      std::make_shared<const TokenMap>(TokenMap::from_ids(other, 1000, 700, "another test token map"));
  write_checkpoint(dir / "b.h5", with_other, tables, h5);
  EXPECT_NE(open_ple_checkpoint(dir / "b.h5", config)->content_identity(), a);
  write_npy_integers(dir / "st" / k_token_map_file, other);
  EXPECT_NE(open_ple_checkpoint(dir / "st", config)->content_identity(), st);
  // The map put back: the same checkpoint again.
  write_npy_integers(dir / "st" / k_token_map_file, config.token_map->ids());
  EXPECT_EQ(open_ple_checkpoint(dir / "st", config)->content_identity(), st);
}

}  // namespace
