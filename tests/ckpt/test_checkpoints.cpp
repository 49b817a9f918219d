// Round trips: make -> verify -> inspect; make (safetensors) -> convert (HDF5) -> embed
// gives identical bytes for every format (FP8-E8M0 included); embed against a reference
// decode.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>
#include <tuple>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/ple_checkpoint.hpp"
#include "ckpt/safetensors.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "engine/embed.hpp"
#include "format/encode.hpp"
#include "format/reference_formats.hpp"
#include "hash/ngram_ids.hpp"
#include "hash/random_batches.hpp"
#include "io/file_reads.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

struct FormatCase {
  const char* dtype;  // config's ple_embedding_dtype
  RowFormat format;
};

const FormatCase k_formats[] = {{nullptr, RowFormat::f32},   {nullptr, RowFormat::bf16},
                                {nullptr, RowFormat::f16},   {"float8_e4m3fn", RowFormat::fp8},
                                {"nvfp4", RowFormat::nvfp4}, {"float8_e4m3fn", RowFormat::fp8_e8m0}};

// Reference decode of one stored value, from the format definitions (test-side code).
float reference_value(const PleTableInfo& info, const std::uint8_t* row, const std::uint8_t* scales, int j) {
  switch (info.layout.format) {
    case RowFormat::f32: {
      float v;
      std::memcpy(&v, row + 4 * j, 4);
      return v;
    }
    case RowFormat::bf16: {
      const std::uint32_t b = static_cast<std::uint32_t>(row[2 * j] | (row[2 * j + 1] << 8)) << 16;
      float v;
      std::memcpy(&v, &b, 4);
      return v;
    }
    case RowFormat::f16: {
      _Float16 h;
      std::memcpy(&h, row + 2 * j, 2);
      return static_cast<float>(h);
    }
    case RowFormat::fp8:
      return static_cast<float>(reference::e4m3_value(row[j])) * info.global_scale;
    case RowFormat::nvfp4: {
      const std::uint8_t nibble = j % 2 == 0 ? row[j / 2] & 0xF : row[j / 2] >> 4;
      return (static_cast<float>(reference::e2m1_value(nibble)) *
              static_cast<float>(reference::e4m3_value(scales[j / 16]))) *
             info.global_scale;
    }
    case RowFormat::fp8_e8m0:
      return reference::fp8_e8m0_value(row[j], scales[j / 32]);
  }
  return 0;
}

TokenBatch test_batch(const ModelConfig& config) {
  std::mt19937_64 rng(8);
  TokenBatch batch(config.ngram_size);
  for (const auto& r : random_requests(rng, config, 6, 30)) batch.add_request(r.tokens, r.context);
  return batch;
}

// Chunks of zeros are written as holes, a trailing one included: the file has its full
// size, validates, reads back zeros, and occupies less disk than its size.
TEST(Checkpoints, ZeroChunksAreWrittenAsHoles) {
  const ScratchDir dir;
  const auto path = dir / "sparse.safetensors";
  constexpr std::int64_t zero_bytes = 40 << 20;  // one band of zeros
  const std::vector<StTensorSource> tensors{
      {"ones",
       StDtype::U8,
       {1024},
       1,
       [](std::uint64_t, std::span<std::uint8_t> c) { std::fill(c.begin(), c.end(), 1); }},
      {"zeros", StDtype::U8, {zero_bytes}, 1, [](std::uint64_t, std::span<std::uint8_t> c) {
         std::fill(c.begin(), c.end(), 0);
       }}};
  write_safetensors(path, tensors, {});
  const SafetensorsFile file(path);
  const auto ones = file.data(*file.find("ones"));
  const auto zeros = file.data(*file.find("zeros"));
  EXPECT_TRUE(std::all_of(ones.begin(), ones.end(), [](std::uint8_t b) { return b == 1; }));
  ASSERT_EQ(zeros.size(), static_cast<std::size_t>(zero_bytes));
  EXPECT_TRUE(std::all_of(zeros.begin(), zeros.end(), [](std::uint8_t b) { return b == 0; }));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_LT(static_cast<std::int64_t>(st.st_blocks) * 512, zero_bytes / 2);
}

std::vector<std::uint8_t> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Rows are made by all cores in pieces; a checkpoint never depends on how many (a table of
// ~140k rows: about 140 pieces, spread over 1 or 5 threads): safetensors and HDF5 files
// byte for byte (HDF5's without object times).
TEST(Checkpoints, MadeBytesDoNotDependOnTheThreadCount) {
  const ScratchDir dir;
  for (const char* dtype : {"bfloat16", "nvfp4"}) {
    nlohmann::json j = {
        {"vocab_size", 1000},   {"eos_token_id", 2},   {"num_hidden_layers", 2},         {"ngram_size", 3},
        {"heads_per_ngram", 2}, {"ple_embed_dim", 64}, {"ngram_vocab_size_base", 35000}, {"split_ngram_parts", 3},
        {"ple_layer_ids", {1}}};
    if (std::string(dtype) == "nvfp4") j["ple_embedding_dtype"] = dtype;
    const ModelConfig config = parse_model_config(j, "config");
    const RowFormat format = default_format(config);
    std::vector<std::vector<std::uint8_t>> made;
    for (std::size_t threads : {1, 5}) {
      // A second apart, so that a time stored in a file would differ.
      if (threads != 1) std::this_thread::sleep_for(std::chrono::milliseconds(1100));
      set_host_threads(threads);
      const std::string name = std::string(dtype) + "_" + std::to_string(threads);
      write_checkpoint(dir / name, config, synthetic_tables(config, format, 9), {});
      write_checkpoint(dir / (name + ".h5"), config, synthetic_tables(config, format, 9), {CheckpointKind::hdf5});
      made.push_back(file_bytes(dir / name / "model.safetensors"));
      made.push_back(file_bytes(dir / (name + ".h5")));
    }
    set_host_threads(0);
    ASSERT_GT(made[0].size(), 100'000u);
    ASSERT_GT(made[1].size(), 100'000u);
    EXPECT_TRUE(made[0] == made[2]) << dtype << ": safetensors bytes differ between 1 and 5 threads";
    EXPECT_TRUE(made[1] == made[3]) << dtype << ": HDF5 bytes differ between 1 and 5 threads";
  }
}

// A source that fails mid-write (a read error, out of memory) ends the write with its error,
// after the band in flight, and leaves no file under the final name nor a partial one.
TEST(Checkpoints, ASourceFailingMidWriteLeavesNoFile) {
  const ScratchDir dir;
  const auto path = dir / "failed.safetensors";
  constexpr std::int64_t bytes = 300 << 20;  // five bands
  const std::vector<StTensorSource> tensors{
      {"rows", StDtype::U8, {bytes}, 1, [](std::uint64_t offset, std::span<std::uint8_t> c) {
         if (offset >= (128u << 20)) throw InputError("source: read failed");
         std::fill(c.begin(), c.end(), 7);
       }}};
  EXPECT_THROW(write_safetensors(path, tensors, {}), InputError);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".partial"));
}

TEST(Checkpoints, MakeVerifyConvertEmbedForEveryFormat) {
  for (const auto& fc : k_formats) {
    SCOPED_TRACE(to_string(fc.format));
    const ScratchDir dir;
    const ModelConfig config = small_config(fc.dtype);
    const auto tables = synthetic_tables(config, fc.format, 77);
    write_checkpoint(dir / "st", config, tables, {CheckpointKind::safetensors, 3});
    const auto st = open_ple_checkpoint(dir / "st", load_checkpoint_config(dir / "st"));
    st->verify_data({});
    write_checkpoint(dir / "t.h5", config, checkpoint_tables(*st), {CheckpointKind::hdf5});
    const auto h5 = open_ple_checkpoint(dir / "t.h5", load_checkpoint_config(dir / "t.h5"));
    h5->verify_data({});
    write_checkpoint(dir / "back", config, checkpoint_tables(*h5), {CheckpointKind::safetensors, 1});
    const auto back = open_ple_checkpoint(dir / "back", config);

    for (int d = 0; d < config.num_ple_layers(); ++d) {
      const auto& info = st->table(d);
      EXPECT_EQ(info.layout.format, fc.format);
      EXPECT_EQ(h5->table(d).layout.format, fc.format);
      EXPECT_EQ(back->table(d).layout.format, fc.format);
      EXPECT_EQ(info.global_scale, h5->table(d).global_scale);
      EXPECT_EQ(info.multipliers, derive_table_spec(config, d).multipliers);
      // Stored rows: identical in all three checkpoints, and the synthetic values encoded.
      const auto n = static_cast<std::size_t>(info.layout.rows);
      std::vector<std::uint8_t> a(n * info.layout.row_bytes()), b(a.size()), c(a.size());
      std::vector<std::uint8_t> sa(n * info.layout.scale_bytes()), sb(sa.size()), sc(sa.size());
      st->read_rows(d, 0, info.layout.rows, a, sa);
      h5->read_rows(d, 0, info.layout.rows, b, sb);
      back->read_rows(d, 0, info.layout.rows, c, sc);
      ASSERT_EQ(a, b);
      ASSERT_EQ(a, c);
      ASSERT_EQ(sa, sb);
      ASSERT_EQ(sa, sc);
      for (std::int64_t r : {std::int64_t{0}, std::int64_t{311}, info.layout.rows - 1}) {
        const std::uint8_t* row = a.data() + r * info.layout.row_bytes();
        const std::uint8_t* scales = sa.data() + r * info.layout.scale_bytes();
        for (int j = 0; j < info.layout.head_dim; ++j) {
          const float truth = synthetic_value(77, d, r, j);
          const float got = reference_value(info, row, scales, j);
          const float tolerance = fc.format == RowFormat::nvfp4                                     ? 0.02f
                                  : fc.format == RowFormat::fp8 || fc.format == RowFormat::fp8_e8m0 ? 0.003f
                                                                                                    : 2e-4f;
          ASSERT_NEAR(got, truth, tolerance) << "row " << r << " col " << j;
        }
      }
    }

    const TokenBatch batch = test_batch(config);
    for (OutDtype dtype : {OutDtype::f32, OutDtype::bf16, OutDtype::f16}) {
      const auto from_st = embed_batch(config, *st, batch, dtype);
      const auto from_h5 = embed_batch(config, *h5, batch, dtype);
      ASSERT_EQ(from_st.size(), from_h5.size());
      for (std::size_t d = 0; d < from_st.size(); ++d) ASSERT_EQ(from_st[d].data, from_h5[d].data);
      write_embeddings_h5(dir / "e_st.h5", batch.query_start_loc, from_st, config.ple_embed_dim, dtype);
      write_embeddings_h5(dir / "e_h5.h5", batch.query_start_loc, from_h5, config.ple_embed_dim, dtype);
      std::ifstream x(dir / "e_st.h5", std::ios::binary), y(dir / "e_h5.h5", std::ios::binary);
      ASSERT_EQ(std::string(std::istreambuf_iterator<char>(x), {}), std::string(std::istreambuf_iterator<char>(y), {}))
          << "output files differ";
    }

    // embed against the reference decode of the rows the ids name.
    const auto embedded = embed_batch(config, *h5, batch, OutDtype::f32);
    for (int d = 0; d < config.num_ple_layers(); ++d) {
      const auto& info = h5->table(d);
      const auto ids = compute_ngram_ids(derive_table_spec(config, d), batch);
      std::vector<std::uint8_t> row(info.layout.row_bytes()), scales(info.layout.scale_bytes());
      const float* out = reinterpret_cast<const float*>(embedded[static_cast<std::size_t>(d)].data.data());
      for (std::size_t i = 0; i < ids.size(); ++i) {
        h5->read_rows(d, ids[i], ids[i] + 1, row, scales);
        for (int j = 0; j < info.layout.head_dim; ++j)
          ASSERT_EQ(out[i * info.layout.head_dim + j], reference_value(info, row.data(), scales.data(), j))
              << "layer " << d << " id " << ids[i] << " col " << j;
      }
    }
  }
}

// FP8-E8M0 tables as stored: E4M3 codes, and E8M0 block scales in their own shards
// (safetensors dtype F8_E8M0), each the scale of its block's values (synthetic rows, real
// scales); no global scale. A table the files could not give back is refused: a global
// scale the format does not store, blocks split across rows.
TEST(Checkpoints, Fp8E8m0TablesStoreE8m0BlockScalesAndNoGlobalScale) {
  const ScratchDir dir;
  const ModelConfig config = small_config("float8_e4m3fn", 3);
  const std::vector<TableSource> tables = synthetic_tables(config, RowFormat::fp8_e8m0, 5);
  EXPECT_EQ(tables[0].info.global_scale, 1.0f);
  write_checkpoint(dir / "st", config, tables, {});
  const SafetensorsFile file(dir / "st" / "model.safetensors");
  const std::string prefix = "model.language_model.layers.2.ple.ple_embedding.ngram_embedding.";
  const StTensor* codes = file.find(prefix + "shard_1.weight");
  const StTensor* scales = file.find(prefix + "shard_1.weight_scale");
  ASSERT_NE(codes, nullptr);
  ASSERT_NE(scales, nullptr);
  EXPECT_EQ(codes->dtype, StDtype::F8_E4M3);
  EXPECT_EQ(scales->dtype, StDtype::F8_E8M0);
  EXPECT_EQ(std::string(to_string(scales->dtype)), "F8_E8M0");
  EXPECT_EQ(codes->shape, (std::vector<std::int64_t>{codes->shape[0], 32}));
  EXPECT_EQ(scales->shape, (std::vector<std::int64_t>{codes->shape[0], 1}));
  EXPECT_EQ(file.find(prefix + "weight_scale"), nullptr);
  EXPECT_EQ(file.find(prefix + "weight_scale_2"), nullptr);

  const auto ckpt = open_ple_checkpoint(dir / "st", config);
  const PleTableInfo& info = ckpt->table(1);
  EXPECT_EQ(info.global_scale, 1.0f);
  std::vector<std::uint8_t> row(info.layout.row_bytes()), scale(info.layout.scale_bytes());
  for (const std::int64_t r : {std::int64_t{0}, std::int64_t{77}, info.layout.rows - 1}) {
    ckpt->read_rows(1, r, r + 1, row, scale);
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(synthetic_value(5, 1, r, j)));
    EXPECT_EQ(scale[0], encode_e8m0_scale(amax)) << "row " << r;
  }

  std::vector<TableSource> with_global = tables;
  with_global[0].info.global_scale = 0.5f;
  EXPECT_THROW(write_checkpoint(dir / "global", config, with_global, {}), InputError);
  EXPECT_FALSE(std::filesystem::exists(dir / "global"));
  std::vector<TableSource> split = tables;
  split[0].info.layout.head_dim = 48;
  EXPECT_THROW(write_checkpoint(dir / "split.h5", config, split, {CheckpointKind::hdf5}), InputError);
  EXPECT_FALSE(std::filesystem::exists(dir / "split.h5"));
  ModelConfig sixteen = config;
  sixteen.ple_embed_dim = 64;  // 16-value rows: half a block
  EXPECT_THROW((void)synthetic_tables(sixteen, RowFormat::fp8_e8m0, 5), InputError);
}

// Synthetic rows asked for their codes alone or their block scales alone (the disk tier's
// reads of a synthetic table) are the bytes made with both, on the host and on the GPU.
TEST(Checkpoints, SyntheticRowsGiveCodesOrScalesAlone) {
  const std::pair<const char*, RowFormat> formats[] = {
      {"nvfp4", RowFormat::nvfp4}, {"float8_e4m3fn", RowFormat::fp8_e8m0}, {nullptr, RowFormat::bf16}};
  for (const auto& [dtype, format] : formats)
    for (const RowMaker maker : {RowMaker::host, RowMaker::gpu_if_present}) {
      SCOPED_TRACE(to_string(format));
      const ModelConfig config = small_config(dtype, 3);
      const TableSource source = synthetic_tables(config, format, 8, maker).back();
      const TableLayout& layout = source.info.layout;
      const std::int64_t begin = 13;
      const std::int64_t end = layout.rows - 2;
      const auto n = static_cast<std::size_t>(end - begin);
      std::vector<std::uint8_t> rows(n * layout.row_bytes()), scales(n * layout.scale_bytes());
      source.rows(begin, end, rows, scales);
      std::vector<std::uint8_t> rows_alone(rows.size(), 0xEE), scales_alone(scales.size(), 0xEE);
      source.rows(begin, end, rows_alone, {});
      source.rows(begin, end, {}, scales_alone);
      EXPECT_EQ(rows_alone, rows);
      EXPECT_EQ(scales_alone, scales);
    }
}

// Ranges across shard boundaries, and the parts left empty not read: codes only (the disk
// tier's step reads), scales only (its load of the block scales), in both checkpoint kinds,
// for both block-scaled formats.
TEST(Checkpoints, RowRangesReadAcrossShardBoundaries) {
  const ScratchDir dir;
  for (const auto& [dtype, format, kind] :
       {std::tuple{"nvfp4", RowFormat::nvfp4, CheckpointKind::safetensors},
        std::tuple{"nvfp4", RowFormat::nvfp4, CheckpointKind::hdf5},
        std::tuple{"float8_e4m3fn", RowFormat::fp8_e8m0, CheckpointKind::safetensors},
        std::tuple{"float8_e4m3fn", RowFormat::fp8_e8m0, CheckpointKind::hdf5}}) {
    SCOPED_TRACE(std::string(to_string(format)) + " " + to_string(kind));
    const ModelConfig config = small_config(dtype, 5);
    const std::filesystem::path path =
        dir / (std::string(to_string(format)) + (kind == CheckpointKind::hdf5 ? ".h5" : "_st"));
    write_checkpoint(path, config, synthetic_tables(config, format, 3), {kind});
    const auto ckpt = open_ple_checkpoint(path, config);
    const auto& info = ckpt->table(1);
    const std::size_t row_bytes = info.layout.row_bytes();
    const std::size_t scale_bytes = info.layout.scale_bytes();
    const std::int64_t shard_rows = derive_table_spec(config, 1).shard_rows;
    std::vector<std::uint8_t> all(info.layout.rows * row_bytes), all_s(info.layout.rows * scale_bytes);
    ckpt->read_rows(1, 0, info.layout.rows, all, all_s);
    for (auto [b, e] : {std::pair<std::int64_t, std::int64_t>{shard_rows - 3, shard_rows + 4},
                        {0, 1},
                        {info.layout.rows - 1, info.layout.rows},
                        {7, 7},
                        {1, 3 * shard_rows + 1}}) {
      const auto n = static_cast<std::size_t>(e - b);
      std::vector<std::uint8_t> part(n * row_bytes), scales(n * scale_bytes);
      ckpt->read_rows(1, b, e, part, scales);
      EXPECT_TRUE(std::equal(part.begin(), part.end(), all.begin() + b * row_bytes));
      EXPECT_TRUE(std::equal(scales.begin(), scales.end(), all_s.begin() + b * scale_bytes));
      std::vector<std::uint8_t> codes_only(n * row_bytes, 0xEE), scales_only(n * scale_bytes, 0xEE);
      ckpt->read_rows(1, b, e, codes_only, {});
      ckpt->read_rows(1, b, e, {}, scales_only);
      EXPECT_EQ(codes_only, part);
      EXPECT_EQ(scales_only, scales);
    }
    const std::vector<std::int64_t> set{0, 2, shard_rows, std::int64_t{info.layout.rows} - 1};
    std::vector<std::uint8_t> codes(set.size() * row_bytes, 0xEE);
    ckpt->read_row_set(1, set, codes, {});
    for (std::size_t i = 0; i < set.size(); ++i)
      EXPECT_TRUE(std::equal(codes.begin() + i * row_bytes, codes.begin() + (i + 1) * row_bytes,
                             all.begin() + set[i] * row_bytes))
          << "row " << set[i];
    EXPECT_THROW(ckpt->read_rows(1, 0, info.layout.rows + 1, all, all_s), InputError);
  }
}

// Row sets as the disk tier reads them, several in one call: rows a few apart (read as one
// span and copied out), far apart (one read each) and both in one set, in runs, across shard
// and file boundaries, an empty set, a table asked for twice, codes only and with scales,
// through the page cache and past it, as a step's sets and as bulk ones (wider gaps), rows of
// 16 and 64 bytes; every row where it belongs, nothing written past the outputs.
TEST(Checkpoints, RowSetsOfCloseAndFarRowsReadEachRowIntoItsPlace) {
  const ScratchDir dir;
  const std::tuple<const char*, RowFormat, int> made[] = {
      {"nvfp4", RowFormat::nvfp4, 1}, {nullptr, RowFormat::bf16, 3}, {"float8_e4m3fn", RowFormat::fp8_e8m0, 2}};
  std::mt19937_64 rng(4);
  for (const auto& [dtype, format, files] : made) {
    SCOPED_TRACE(to_string(format));
    const ModelConfig config = small_config(dtype, 5);
    const std::filesystem::path path = dir / to_string(format);
    write_checkpoint(path, config, synthetic_tables(config, format, 3), {CheckpointKind::safetensors, files});
    const auto ckpt = open_ple_checkpoint(path, config);
    std::vector<std::vector<std::uint8_t>> all(ckpt->tables().size()), all_s(ckpt->tables().size());
    for (const PleTableInfo& info : ckpt->tables()) {
      const auto d = static_cast<std::size_t>(info.ple_index);
      all[d].resize(static_cast<std::size_t>(info.layout.rows) * info.layout.row_bytes());
      all_s[d].resize(static_cast<std::size_t>(info.layout.rows) * info.layout.scale_bytes());
      ckpt->read_rows(info.ple_index, 0, info.layout.rows, all[d], all_s[d]);
    }
    for (int round = 0; round < 12; ++round) {
      const bool with_scales = kernels::block_scaling(format).scaled() && round % 2 == 1;
      // Per set: its table and the rows, gaps drawn from a mix (dense, page-near, far).
      std::vector<int> tables;
      for (const PleTableInfo& info : ckpt->tables()) tables.push_back(info.ple_index);
      tables.push_back(tables.front());                                // asked for twice
      std::vector<std::vector<std::int64_t>> rows(tables.size() + 1);  // the last set: empty
      std::vector<std::vector<std::uint8_t>> codes(rows.size()), scales(rows.size());
      std::vector<PleCheckpoint::RowSet> sets;
      for (std::size_t k = 0; k < rows.size(); ++k) {
        const int d = k < tables.size() ? tables[k] : tables.front();
        const TableLayout& layout = ckpt->table(d).layout;
        // Apart by under a page, between a page and 16 KiB (64-byte rows), and far.
        const std::uint64_t apart[] = {2, 60, 150, 5000};
        for (std::int64_t r = static_cast<std::int64_t>(rng() % 7); k < tables.size() && r < layout.rows;
             r += 1 + static_cast<std::int64_t>(rng() % apart[(rng() >> 7) % (round % 3 == 2 ? 4 : 3)]))
          rows[k].push_back(r);
        codes[k].assign((rows[k].size() + 1) * layout.row_bytes(), 0xEE);  // a row's room past the end
        scales[k].assign(with_scales ? (rows[k].size() + 1) * layout.scale_bytes() : 0, 0xEE);
        sets.push_back({d, rows[k], std::span(codes[k]).first(rows[k].size() * layout.row_bytes()),
                        std::span(scales[k]).first(with_scales ? rows[k].size() * layout.scale_bytes() : 0),
                        round % 4 >= 2});  // bulk sets' spans join rows further apart
      }
      for (const PageCache cache : {PageCache::use, PageCache::bypass}) {
        ckpt->read_row_sets(sets, cache);
        for (std::size_t k = 0; k < sets.size(); ++k) {
          const auto d = static_cast<std::size_t>(sets[k].ple_index);
          const std::size_t rb = ckpt->table(sets[k].ple_index).layout.row_bytes();
          const std::size_t sb = ckpt->table(sets[k].ple_index).layout.scale_bytes();
          for (std::size_t i = 0; i < rows[k].size(); ++i) {
            const auto at = static_cast<std::size_t>(rows[k][i]);
            ASSERT_TRUE(
                std::equal(codes[k].begin() + i * rb, codes[k].begin() + (i + 1) * rb, all[d].begin() + at * rb))
                << "set " << k << " row " << rows[k][i] << " (round " << round << ")";
            if (with_scales) {
              ASSERT_TRUE(
                  std::equal(scales[k].begin() + i * sb, scales[k].begin() + (i + 1) * sb, all_s[d].begin() + at * sb))
                  << "scales of set " << k << " row " << rows[k][i];
            }
          }
          const auto untouched = [](const std::vector<std::uint8_t>& v, std::size_t tail) {
            return std::all_of(v.end() - static_cast<std::ptrdiff_t>(tail), v.end(),
                               [](std::uint8_t b) { return b == 0xEE; });
          };
          EXPECT_TRUE(untouched(codes[k], rb)) << "set " << k;
          if (with_scales) {
            EXPECT_TRUE(untouched(scales[k], sb)) << "set " << k;
          }
        }
      }
    }
  }
}

// Close rows whose spans add up to more than the span buffer holds (64 MiB) are read in
// rounds that carry over from one set to the next, beside rows read alone, as a step's and as
// bulk sets; every row lands where it belongs.
TEST(Checkpoints, RowSetsWhoseSpansOutgrowTheBufferAreReadInRounds) {
  const ScratchDir dir;
  ModelConfig config = small_config(nullptr, 5);
  config.ngram_vocab_size_base = 800'000;  // 64-byte rows, about 100 MB a table
  write_checkpoint(dir / "st", config, synthetic_tables(config, RowFormat::bf16, 3), {CheckpointKind::safetensors});
  const auto ckpt = open_ple_checkpoint(dir / "st", config);
  const TableLayout& layout = ckpt->table(0).layout;
  ASSERT_GT(static_cast<std::size_t>(layout.rows) * layout.row_bytes(), std::size_t{96} << 20);
  std::vector<std::vector<std::uint8_t>> all(2);
  std::vector<std::vector<std::int64_t>> rows(3);
  for (int d = 0; d < 2; ++d) {
    all[d].resize(static_cast<std::size_t>(ckpt->table(d).layout.rows) * layout.row_bytes());
    ckpt->read_rows(d, 0, ckpt->table(d).layout.rows, all[d], {});
  }
  // Sets: table 0 dense (spans over the whole table), table 1 far apart (read alone), table 1
  // dense again (its spans in rounds after table 0's).
  const int table_of[] = {0, 1, 1};
  for (std::int64_t r = 1; r < layout.rows; r += 2) rows[0].push_back(r);
  for (std::int64_t r = 7; r < ckpt->table(1).layout.rows; r += 9001) rows[1].push_back(r);
  for (std::int64_t r = 0; r < ckpt->table(1).layout.rows; r += 3) rows[2].push_back(r);
  for (const PageCache cache : {PageCache::use, PageCache::bypass})
    for (const bool bulk : {false, true}) {
      std::vector<std::vector<std::uint8_t>> codes(3);
      std::vector<PleCheckpoint::RowSet> sets;
      for (std::size_t k = 0; k < 3; ++k) {
        codes[k].assign(rows[k].size() * layout.row_bytes(), 0xEE);
        sets.push_back({table_of[k], rows[k], codes[k], {}, bulk});
      }
      ckpt->read_row_sets(sets, cache);
      for (std::size_t k = 0; k < 3; ++k)
        for (std::size_t i = 0; i < rows[k].size(); ++i) {
          const auto at = static_cast<std::size_t>(rows[k][i]) * layout.row_bytes();
          ASSERT_TRUE(std::equal(codes[k].begin() + static_cast<std::ptrdiff_t>(i * layout.row_bytes()),
                                 codes[k].begin() + static_cast<std::ptrdiff_t>((i + 1) * layout.row_bytes()),
                                 all[static_cast<std::size_t>(table_of[k])].begin() + static_cast<std::ptrdiff_t>(at)))
              << "set " << k << " row " << rows[k][i] << (cache == PageCache::use ? " cached" : " direct")
              << (bulk ? " bulk" : "");
        }
    }
}

// Past the page cache, rows close together still go past it (their spans fit io_uring's
// bounce blocks): after dense rows of a table are read so, few of its pages are cached.
TEST(Checkpoints, RowSetsReadPastThePageCacheLeaveItsPagesOut) {
  const ScratchDir dir;
  ModelConfig config = small_config(nullptr, 5);
  config.ngram_vocab_size_base = 200'000;  // 64-byte rows, about 50 MB
  write_checkpoint(dir / "st", config, synthetic_tables(config, RowFormat::bf16, 3), {CheckpointKind::safetensors});
  const auto ckpt = open_ple_checkpoint(dir / "st", config);
  const std::filesystem::path file = ckpt->files().front();
  if (std::string(file_read_path()) != "io_uring" || PreadFile(file).direct_fd() < 0)
    GTEST_SKIP() << "no io_uring or no O_DIRECT here: reads past the cache are not io_uring's";
  const TableLayout& layout = ckpt->table(0).layout;
  std::vector<std::int64_t> rows;
  for (std::int64_t r = 0; r < std::min<std::int64_t>(layout.rows, 200'000); r += 4) rows.push_back(r);  // 12.8 MB
  std::vector<std::uint8_t> codes(rows.size() * layout.row_bytes());
  const PleCheckpoint::RowSet set{0, rows, codes, {}};
  drop_cached_pages(file);
  ckpt->read_row_sets({&set, 1}, PageCache::bypass);
  const auto size = static_cast<std::size_t>(std::filesystem::file_size(file));
  const int fd = ::open(file.c_str(), O_RDONLY);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  std::vector<unsigned char> resident((size + 4095) / 4096);
  ASSERT_EQ(::mincore(map, size, resident.data()), 0);
  ::munmap(map, size);
  ::close(fd);
  const auto cached = std::count_if(resident.begin(), resident.end(), [](unsigned char c) { return (c & 1) != 0; });
  EXPECT_LT(cached, 200'000 * 64 / 4096 / 10) << "pages cached of the 3125 the rows span";
}

// Tables made here start their rows on a 4 KiB boundary of the file (the small tensors
// after them), so a rank's rows keep the 16-byte alignment of their file offset and the
// pinned tier loads them past the page cache; those reads give the rows' bytes.
TEST(Checkpoints, RowsOfTablesMadeHereLieAtThePagesAlignment) {
  const ScratchDir dir;
  const std::pair<const char*, RowFormat> formats[] = {{nullptr, RowFormat::bf16}, {"float8_e4m3fn", RowFormat::fp8}};
  for (const auto& [dtype, format] : formats) {
    SCOPED_TRACE(to_string(format));
    const ModelConfig config = small_config(dtype, 5);
    const std::filesystem::path path = dir / to_string(format);
    write_checkpoint(path, config, synthetic_tables(config, format, 3), {CheckpointKind::safetensors, 2});
    const auto ckpt = open_ple_checkpoint(path, config);
    for (const PleTableInfo& info : ckpt->tables()) {
      const TableSource source = ckpt->table_source(info.ple_index);
      ASSERT_TRUE(source.past_cache.has_value());
      EXPECT_EQ(source.past_cache->file_offset(0) % 4096, 0u) << "table " << info.ple_index;
      const std::size_t row_bytes = info.layout.row_bytes();
      for (const std::int64_t row : {std::int64_t{1}, info.layout.rows / 3, info.layout.rows - 1})
        EXPECT_EQ(source.past_cache->file_offset(row) % 16, 0u) << "row " << row;
      // Read past the cache into memory at the file's alignment, as the pinned tier does.
      const std::int64_t begin = info.layout.rows / 3;
      const std::size_t bytes = static_cast<std::size_t>(info.layout.rows - begin) * row_bytes;
      std::vector<std::uint8_t> arena(bytes + 8192);
      const std::size_t skew = source.past_cache->file_offset(begin) % 4096;
      std::uint8_t* at = arena.data() + (4096 - reinterpret_cast<std::uintptr_t>(arena.data()) % 4096) + skew;
      std::vector<std::uint8_t> expected(bytes), scales;
      source.rows(begin, info.layout.rows, expected, scales);
      source.past_cache->rows(begin, info.layout.rows, {at, bytes}, scales);
      EXPECT_TRUE(std::equal(expected.begin(), expected.end(), at)) << "table " << info.ple_index;
    }
  }
}

TEST(Checkpoints, HashBuffersInTheCheckpointAreAuthoritative) {
  const ScratchDir dir;
  const ModelConfig config = small_config();
  auto tables = synthetic_tables(config, RowFormat::bf16, 5);
  tables[0].info.multipliers[1] += 2;  // a checkpoint hashed differently
  write_checkpoint(dir / "st", config, tables, {});
  const auto ckpt = open_ple_checkpoint(dir / "st", config);
  const TableSpec derived = derive_table_spec(config, 0);
  const TableSpec used = hashing_spec(derived, ckpt->table(0), ckpt->path());
  EXPECT_EQ(used.multipliers, tables[0].info.multipliers);
  EXPECT_NE(used.multipliers, derived.multipliers);
  const TokenBatch batch = test_batch(config);
  EXPECT_NE(compute_ngram_ids(used, batch), compute_ngram_ids(derived, batch));
}

}  // namespace

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

TEST(Checkpoints, HashStatsAndTokenLookupTensorsAreIgnored) {
  const ScratchDir dir;
  const ModelConfig config = small_config();
  write_checkpoint(dir / "valid", config, synthetic_tables(config, RowFormat::bf16, 6), {});
  auto raw = read_raw(dir / "valid" / "model.safetensors");
  const std::string prefix = "model.language_model.layers.0.ple.ple_embedding.";
  raw[prefix + "hashstats_collisions"] = {"I64", {3}, std::vector<std::uint8_t>(24, 1)};
  raw[prefix + "ngram_embedding.hashstats_load"] = {"F32", {2}, std::vector<std::uint8_t>(8, 2)};
  raw[prefix + "token_lookup"] = {"I64", {2}, std::vector<std::uint8_t>(16, 3)};
  std::filesystem::create_directories(dir / "extra");
  write_raw(dir / "extra" / "model.safetensors", raw);
  const auto valid = open_ple_checkpoint(dir / "valid", config);
  const auto extra = open_ple_checkpoint(dir / "extra", config);
  for (int d = 0; d < config.num_ple_layers(); ++d) {
    const auto& info = valid->table(d);
    std::vector<std::uint8_t> a(info.layout.rows * info.layout.row_bytes()), b(a.size()), none;
    valid->read_rows(d, 0, info.layout.rows, a, none);
    extra->read_rows(d, 0, info.layout.rows, b, none);
    EXPECT_EQ(a, b);
    EXPECT_EQ(extra->table(d).multipliers, info.multipliers);
  }
}

}  // namespace
