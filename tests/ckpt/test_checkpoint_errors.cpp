// A corpus of malformed checkpoints, each built here from a valid one: every case must
// fail with an InputError naming the file and the problem (no crash; run under ASan/UBSan
// in CI).

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cmath>
#include <fstream>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/ple_checkpoint.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;
namespace fs = std::filesystem;
using nlohmann::json;

const std::string k_prefix = "model.language_model.layers.0.ple.ple_embedding.";

class MalformedCheckpoint : public ::testing::Test {
 protected:
  // A valid one-file checkpoint of `config`, as raw tensors.
  RawTensors valid(const ModelConfig& config, RowFormat format) {
    write_checkpoint(dir_ / "valid", config, synthetic_tables(config, format, 1), {});
    return read_raw(dir_ / "valid" / "model.safetensors");
  }

  // Opens (and reads every row of) `path`; the error must name `file` and contain `problem`.
  void expect_rejected(const fs::path& path, const ModelConfig& config, const fs::path& file,
                       const std::string& problem) {
    try {
      const auto checkpoint = open_ple_checkpoint(path, config);
      checkpoint->verify_data({});
      ADD_FAILURE() << "accepted " << path;
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(file.string()), std::string::npos) << message;
      EXPECT_NE(message.find(problem), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }

  fs::path file(const std::string& name) const { return dir_ / name; }

  void write_bytes(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }

  static std::string le64(std::uint64_t n) {
    std::string s;
    for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>(n >> (8 * i)));
    return s;
  }

  ScratchDir dir_;
  ModelConfig bf16_ = small_config();
  ModelConfig fp8_ = small_config("float8_e4m3fn");
  ModelConfig nvfp4_ = small_config("nvfp4");
};

TEST_F(MalformedCheckpoint, ShorterThanTheHeaderLength) {
  write_bytes(file("a.safetensors"), "abc");
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "shorter than the 8-byte header length");
}

TEST_F(MalformedCheckpoint, HeaderLengthPastEndOfFile) {
  write_bytes(file("a.safetensors"), le64(1000) + "{}");
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "runs past the end of the file");
}

TEST_F(MalformedCheckpoint, HugeHeader) {
  write_bytes(file("a.safetensors"), le64(200'000'000) + "{}");
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "exceeds the 100 MB limit");
}

TEST_F(MalformedCheckpoint, HeaderNotJson) {
  write_bytes(file("a.safetensors"), le64(9) + "{not json");
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "not valid JSON");
}

TEST_F(MalformedCheckpoint, HeaderNotAnObject) {
  write_bytes(file("a.safetensors"), le64(5) + "[1,2]");
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "does not begin with '{'");
}

TEST_F(MalformedCheckpoint, TruncatedData) {
  auto raw = valid(bf16_, RowFormat::bf16);
  write_raw(file("a.safetensors"), raw);
  const auto size = fs::file_size(file("a.safetensors"));
  fs::resize_file(file("a.safetensors"), size - 10);
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "truncated file");
}

TEST_F(MalformedCheckpoint, OverlappingOffsets) {
  write_raw(file("a.safetensors"), valid(bf16_, RowFormat::bf16), [](json& h) {
    auto& offsets = h[k_prefix + "ngram_embedding.shard_2.weight"]["data_offsets"];
    offsets[0] = offsets[0].get<std::uint64_t>() - 2;
    offsets[1] = offsets[1].get<std::uint64_t>() - 2;
  });
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "overlaps the previous tensor");
}

TEST_F(MalformedCheckpoint, OffsetsOutOfBounds) {
  write_raw(file("a.safetensors"), valid(bf16_, RowFormat::bf16), [](json& h) {
    auto& offsets = h[k_prefix + "ngram_embedding.shard_2.weight"]["data_offsets"];
    offsets[0] = offsets[0].get<std::uint64_t>() + (1u << 30);
    offsets[1] = offsets[1].get<std::uint64_t>() + (1u << 30);
  });
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "out of bounds");
}

TEST_F(MalformedCheckpoint, HoleInTheData) {
  const auto raw = valid(bf16_, RowFormat::bf16);
  const std::uint64_t cut = json::parse("0").get<std::uint64_t>() + raw.begin()->second.bytes.size();
  write_raw(
      file("a.safetensors"), raw,
      [cut](json& h) {
        for (auto& [name, entry] : h.items()) {
          auto& offsets = entry["data_offsets"];
          if (offsets[0].get<std::uint64_t>() >= cut) {
            offsets[0] = offsets[0].get<std::uint64_t>() + 8;
            offsets[1] = offsets[1].get<std::uint64_t>() + 8;
          }
        }
      },
      8);
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "a hole in the data");
}

TEST_F(MalformedCheckpoint, UnknownDtype) {
  write_raw(file("a.safetensors"), valid(bf16_, RowFormat::bf16),
            [](json& h) { h[k_prefix + "ngram_embedding.shard_0.weight"]["dtype"] = "F7"; });
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "unknown dtype \"F7\"");
}

TEST_F(MalformedCheckpoint, ShapeDoesNotMatchBytes) {
  write_raw(file("a.safetensors"), valid(bf16_, RowFormat::bf16),
            [](json& h) { h[k_prefix + "ngram_embedding.shard_0.weight"]["shape"][1] = 33; });
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "needs");
}

TEST_F(MalformedCheckpoint, WrongShardShape) {
  auto raw = valid(bf16_, RowFormat::bf16);
  auto& t = raw[k_prefix + "ngram_embedding.shard_1.weight"];
  t.shape[0] -= 1;
  t.bytes.resize(t.bytes.size() - 64);
  write_raw(file("a.safetensors"), raw);
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "expected [");
}

TEST_F(MalformedCheckpoint, MissingShard) {
  auto raw = valid(bf16_, RowFormat::bf16);
  raw.erase(k_prefix + "ngram_embedding.shard_3.weight");
  write_raw(file("a.safetensors"), raw);
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "shard 3 (rows");
}

TEST_F(MalformedCheckpoint, DuplicateShard) {
  auto raw = valid(bf16_, RowFormat::bf16);
  raw[k_prefix + "ngram_embedding.shard_01.weight"] = raw[k_prefix + "ngram_embedding.shard_1.weight"];
  write_raw(file("a.safetensors"), raw);
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "duplicate of shard 1");
}

TEST_F(MalformedCheckpoint, ShardIndexTooLarge) {
  auto raw = valid(bf16_, RowFormat::bf16);
  raw[k_prefix + "ngram_embedding.shard_7.weight"] = raw[k_prefix + "ngram_embedding.shard_6.weight"];
  write_raw(file("a.safetensors"), raw);
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "shard index 7 >= split_ngram_parts = 7");
}

TEST_F(MalformedCheckpoint, MissingGlobalScale) {
  auto raw = valid(fp8_, RowFormat::fp8);
  raw.erase(k_prefix + "ngram_embedding.weight_scale");
  write_raw(file("a.safetensors"), raw);
  expect_rejected(file("a.safetensors"), fp8_, file("a.safetensors"), "ngram_embedding.weight_scale is missing");
}

TEST_F(MalformedCheckpoint, NanGlobalScale) {
  auto raw = valid(nvfp4_, RowFormat::nvfp4);
  const float nan = std::nanf("");
  auto& scale = raw[k_prefix + "ngram_embedding.weight_scale_2"].bytes;
  std::memcpy(scale.data(), &nan, 4);
  write_raw(file("a.safetensors"), raw);
  expect_rejected(file("a.safetensors"), nvfp4_, file("a.safetensors"), "global scale is nan");
}

TEST_F(MalformedCheckpoint, Nvfp4StoredUnsharded) {
  auto raw = valid(nvfp4_, RowFormat::nvfp4);
  raw[k_prefix + "ngram_embedding.weight"] = {"U8", {2, 16}, std::vector<std::uint8_t>(32)};
  write_raw(file("a.safetensors"), raw);
  expect_rejected(file("a.safetensors"), nvfp4_, file("a.safetensors"), "not unsharded");
}

TEST_F(MalformedCheckpoint, WrongPackedDtype) {
  auto raw = valid(nvfp4_, RowFormat::nvfp4);
  raw[k_prefix + "ngram_embedding.shard_0.weight_scale"].dtype = "U8";
  write_raw(file("a.safetensors"), raw);
  expect_rejected(file("a.safetensors"), nvfp4_, file("a.safetensors"), "packed bytes are never cast");
}

// E4M3 codes with E8M0 block scales (fp8_e8m0): scales of another dtype, a shard without
// its scales, a global scale beside them, an unsharded table with shard scales.
TEST_F(MalformedCheckpoint, E8m0BlockScalesOfAnotherDtype) {
  auto raw = valid(fp8_, RowFormat::fp8_e8m0);
  raw[k_prefix + "ngram_embedding.shard_2.weight_scale"].dtype = "F8_E4M3";
  write_raw(file("a.safetensors"), raw);
  expect_rejected(file("a.safetensors"), fp8_, file("a.safetensors"), "expected F8_E8M0 block scales");
}

TEST_F(MalformedCheckpoint, E8m0ShardWithoutItsScales) {
  auto raw = valid(fp8_, RowFormat::fp8_e8m0);
  raw.erase(k_prefix + "ngram_embedding.shard_3.weight_scale");
  write_raw(file("a.safetensors"), raw);
  expect_rejected(file("a.safetensors"), fp8_, file("a.safetensors"), "shard 3 has no weight_scale");
}

TEST_F(MalformedCheckpoint, GlobalScaleBesideE8m0BlockScales) {
  auto raw = valid(fp8_, RowFormat::fp8_e8m0);
  const float one = 1.0f;
  std::vector<std::uint8_t> bytes(4);
  std::memcpy(bytes.data(), &one, 4);
  raw[k_prefix + "ngram_embedding.weight_scale"] = {"F32", {}, bytes};
  write_raw(file("a.safetensors"), raw);
  expect_rejected(file("a.safetensors"), fp8_, file("a.safetensors"), "a global scale beside fp8_e8m0 block scales");
}

TEST_F(MalformedCheckpoint, E8m0ScalesBesideAnUnshardedTable) {
  auto raw = valid(fp8_, RowFormat::fp8_e8m0);
  RawTensors unsharded;
  for (auto& [name, tensor] : raw)
    if (name.find(".weight_scale") != std::string::npos || name.find(".shard_") == std::string::npos)
      unsharded[name] = tensor;
  const std::int64_t rows = derive_table_spec(fp8_, 0).padded_rows;
  unsharded[k_prefix + "ngram_embedding.weight"] = {
      "F8_E4M3", {rows, 32}, std::vector<std::uint8_t>(static_cast<std::size_t>(rows) * 32)};
  write_raw(file("a.safetensors"), unsharded);
  expect_rejected(file("a.safetensors"), fp8_, file("a.safetensors"), "not to an unsharded table");
}

TEST_F(MalformedCheckpoint, RowDtypeDoesNotMatchConfig) {
  write_raw(file("a.safetensors"), valid(bf16_, RowFormat::bf16));
  expect_rejected(file("a.safetensors"), fp8_, file("a.safetensors"), "does not match ple_embedding_dtype");
}

TEST_F(MalformedCheckpoint, HashBufferWrongDtype) {
  auto raw = valid(bf16_, RowFormat::bf16);
  raw[k_prefix + "layer_multipliers"].dtype = "F64";
  write_raw(file("a.safetensors"), raw);
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "expected I64");
}

TEST_F(MalformedCheckpoint, NoTablesUnderThePrefix) {
  auto raw = valid(bf16_, RowFormat::bf16);
  RawTensors renamed;
  for (auto& [name, t] : raw) renamed["other." + name] = t;
  write_raw(file("a.safetensors"), renamed);
  expect_rejected(file("a.safetensors"), bf16_, file("a.safetensors"), "no ngram_embedding tensors");
}

TEST_F(MalformedCheckpoint, IndexNamesAMissingFile) {
  write_checkpoint(dir_ / "multi", bf16_, synthetic_tables(bf16_, RowFormat::bf16, 1),
                   {CheckpointKind::safetensors, 2});
  fs::remove(dir_ / "multi" / "model-00002-of-00002.safetensors");
  expect_rejected(dir_ / "multi", bf16_, dir_ / "multi" / "model.safetensors.index.json", "does not exist");
}

// Nothing outside the checkpoint's directory is opened, and nothing that is not a file.
TEST_F(MalformedCheckpoint, IndexNamesFilesOutsideTheDirectory) {
  write_checkpoint(dir_ / "multi", bf16_, synthetic_tables(bf16_, RowFormat::bf16, 1),
                   {CheckpointKind::safetensors, 2});
  const fs::path index = dir_ / "multi" / "model.safetensors.index.json";
  // A valid checkpoint file beside the directory, which must not even be opened.
  fs::copy_file(dir_ / "multi" / "model-00002-of-00002.safetensors", dir_ / "outside.safetensors");
  for (const std::string& target : {std::string("../outside.safetensors"), (dir_ / "outside.safetensors").string()}) {
    std::ifstream in(index);
    json document = json::parse(in);
    in.close();
    for (auto& [name, file] : document["weight_map"].items())
      if (file == "model-00002-of-00002.safetensors") file = target;
    std::ofstream(index, std::ios::trunc) << document.dump();
    expect_rejected(dir_ / "multi", bf16_, index, "outside the checkpoint directory");
  }
}

TEST_F(MalformedCheckpoint, FifosAreRefusedWithoutOpening) {
  // Opening a FIFO would wait for a writer for ever.
  ASSERT_EQ(::mkfifo(file("fifo.safetensors").c_str(), 0600), 0);
  expect_rejected(file("fifo.safetensors"), bf16_, file("fifo.safetensors"), "is a FIFO");
  write_checkpoint(dir_ / "multi", bf16_, synthetic_tables(bf16_, RowFormat::bf16, 1),
                   {CheckpointKind::safetensors, 2});
  const fs::path shard = dir_ / "multi" / "model-00002-of-00002.safetensors";
  fs::remove(shard);
  ASSERT_EQ(::mkfifo(shard.c_str(), 0600), 0);
  expect_rejected(dir_ / "multi", bf16_, shard, "is a FIFO");
  ASSERT_EQ(::mkfifo(file("fifo.h5").c_str(), 0600), 0);
  expect_rejected(file("fifo.h5"), bf16_, file("fifo.h5"), "is a FIFO");
}

TEST_F(MalformedCheckpoint, IndexListsATensorTheFileLacks) {
  write_checkpoint(dir_ / "multi", bf16_, synthetic_tables(bf16_, RowFormat::bf16, 1),
                   {CheckpointKind::safetensors, 2});
  const fs::path second = dir_ / "multi" / "model-00002-of-00002.safetensors";
  auto raw = read_raw(second);
  raw.erase(raw.begin());
  write_raw(second, raw);
  expect_rejected(dir_ / "multi", bf16_, second, "lacks tensor");
}

TEST_F(MalformedCheckpoint, TensorMissingFromTheIndex) {
  write_checkpoint(dir_ / "multi", bf16_, synthetic_tables(bf16_, RowFormat::bf16, 1),
                   {CheckpointKind::safetensors, 2});
  const fs::path second = dir_ / "multi" / "model-00002-of-00002.safetensors";
  auto raw = read_raw(second);
  raw["extra.tensor"] = {"U8", {1}, {7}};
  write_raw(second, raw);
  expect_rejected(dir_ / "multi", bf16_, second, "not listed for this file");
}

TEST_F(MalformedCheckpoint, SameTensorInTwoFiles) {
  fs::create_directories(dir_ / "two");
  const auto raw = valid(bf16_, RowFormat::bf16);
  write_raw(dir_ / "two" / "a.safetensors", raw);
  RawTensors one{*raw.begin()};
  write_raw(dir_ / "two" / "b.safetensors", one);
  expect_rejected(dir_ / "two", bf16_, dir_ / "two" / "b.safetensors", "also in");
}

TEST_F(MalformedCheckpoint, CorruptedHdf5ChunkFailsItsChecksum) {
  write_checkpoint(file("t.h5"), bf16_, synthetic_tables(bf16_, RowFormat::bf16, 1), {CheckpointKind::hdf5});
  // Flip one byte inside the stored rows: find row 100 of table 0 in the file.
  std::vector<std::uint8_t> row, none;
  {  // closed again before the file changes: HDF5 shares one open file's caches
    const auto ckpt = open_ple_checkpoint(file("t.h5"), bf16_);
    row.resize(ckpt->table(0).layout.row_bytes());
    ckpt->read_rows(0, 100, 101, row, none);
  }
  std::ifstream in(file("t.h5"), std::ios::binary);
  std::string bytes(std::istreambuf_iterator<char>(in), {});
  const auto at = bytes.find(std::string(row.begin(), row.end()));
  ASSERT_NE(at, std::string::npos);
  bytes[at + 5] ^= 0x40;
  write_bytes(file("t.h5"), bytes);
  expect_rejected(file("t.h5"), bf16_, file("t.h5"), "checksum mismatch");
}

TEST_F(MalformedCheckpoint, Hdf5MissingLayerGroup) {
  write_checkpoint(file("t.h5"), bf16_, synthetic_tables(bf16_, RowFormat::bf16, 1), {CheckpointKind::hdf5});
  ModelConfig three = bf16_;
  three.ple_layer_ids = {1, 2, 3};
  expect_rejected(file("t.h5"), three, file("t.h5"), "/ple/2: group is missing");
}

TEST_F(MalformedCheckpoint, Hdf5FormatDoesNotMatchConfig) {
  write_checkpoint(file("t.h5"), bf16_, synthetic_tables(bf16_, RowFormat::bf16, 1), {CheckpointKind::hdf5});
  expect_rejected(file("t.h5"), nvfp4_, file("t.h5"), "does not match ple_embedding_dtype");
}

TEST_F(MalformedCheckpoint, TruncatedHdf5File) {
  write_checkpoint(file("t.h5"), bf16_, synthetic_tables(bf16_, RowFormat::bf16, 1), {CheckpointKind::hdf5});
  fs::resize_file(file("t.h5"), fs::file_size(file("t.h5")) / 2);
  expect_rejected(file("t.h5"), bf16_, file("t.h5"), "");
}

TEST_F(MalformedCheckpoint, NotAnHdf5File) {
  write_bytes(file("t.h5"), "this is text");
  expect_rejected(file("t.h5"), bf16_, file("t.h5"), "not an HDF5 file");
}

}  // namespace
