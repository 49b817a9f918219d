// Tables of more than 2^32 rows on the host side. One table of 8,589,934,720 rows (two
// heads of primes just above 2^32, 16-value FP8 or NVFP4 rows) in a safetensors checkpoint
// crafted as a sparse file of 77 or 137 GB that takes about 100 KB of disk, in one, two
// or three shards: the disk and host tiers read the marker rows around 2^31, 2^32, the
// shard boundaries and the end; hashed ids land in the table (the second head's all past
// 2^32) and match the reference, and the disk tier reads their rows; balanced ranges tile
// such tables.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ckpt/checkpoint_fixtures.hpp"
#include "core/error.hpp"
#include "hash/ngram_ids.hpp"
#include "hash/reference_ngram_ids.hpp"
#include "sparse_checkpoint.hpp"
#include "store/disk_store.hpp"
#include "store/host_table.hpp"
#include "store/row_range.hpp"
#include "store/row_store_factory.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

constexpr std::int64_t k_2_31 = std::int64_t{1} << 31;
constexpr std::int64_t k_2_32 = std::int64_t{1} << 32;

// Orders 2 and 3 with one head each, so the second head's offset is its first's prime.
ModelConfig large_config(const char* dtype, std::int64_t parts = 3) {
  return parse_model_config(nlohmann::json{{"vocab_size", 1000},
                                           {"eos_token_id", 2},
                                           {"num_hidden_layers", 1},
                                           {"ngram_size", 3},
                                           {"heads_per_ngram", 1},
                                           {"ple_embed_dim", 32},
                                           {"ngram_vocab_size_base", k_2_32 + 1},
                                           {"split_ngram_parts", parts},
                                           {"ple_layer_ids", {1}},
                                           {"ple_embedding_dtype", dtype}},
                            std::string("large rows config (") + dtype + ", " + std::to_string(parts) + " parts)");
}

// A fresh request, one with EOS inside, and two resumed from a context.
std::vector<reference::Request> requests() {
  return {{{2, 2}, {5, 999, 17, 2, 640}}, {{7, 8}, {123, 456, 0}}, {{999, 998}, {1}}, {{0, 0}, {0, 0}}};
}

TokenBatch batch_of(const ModelConfig& config, const std::vector<reference::Request>& rs) {
  TokenBatch batch(config.ngram_size);
  for (const auto& r : rs) batch.add_request(r.tokens, r.context);
  return batch;
}

std::vector<std::int64_t> reference_ids(const ModelConfig& config) {
  std::vector<std::int64_t> flat;
  for (const auto& row : reference::ngram_ids(reference::layer_layout(config, 0), config.ngram_size,
                                              config.heads_per_ngram, config.eos_token_id, requests()))
    flat.insert(flat.end(), row.begin(), row.end());
  return flat;
}

// A format and a number of shards: three of about 2.9G rows; two, the first holding rows
// past 2^32; one, every row in one tensor.
struct Case {
  const char* dtype;
  std::int64_t parts;
};
constexpr Case k_cases[] = {{"float8_e4m3fn", 3}, {"nvfp4", 3}, {"nvfp4", 2}, {"float8_e4m3fn", 1}};

// One case's crafted checkpoint, its marker rows written (the boundaries and the rows the
// requests hash to), opened as a job opens it.
struct MarkedCheckpoint {
  MarkedCheckpoint(const ScratchDir& dir, const Case& c)
      : config(large_config(c.dtype, c.parts)),
        file(dir / (std::string(c.dtype) + "_" + std::to_string(c.parts)), config),
        shard_rows(derive_table_spec(config, 0).shard_rows) {
    if (!file.made()) return;
    for (const std::int64_t row : boundary_rows())
      if (row >= 0 && row < file.rows() && !file.marked(row)) file.mark(row);
    for (const std::int64_t id : reference_ids(config))
      if (!file.marked(id)) file.mark(id);
    checkpoint = open_ple_checkpoint(file.dir(), config);
  }

  // Rows on both sides of 2^31, 2^32 and every shard boundary, and the ends (some of them
  // past the table with fewer shards).
  [[nodiscard]] std::vector<std::int64_t> boundary_rows() const {
    return {0,          k_2_31 - 1,         k_2_31,         k_2_32 - 1,     k_2_32, k_2_32 + 5, shard_rows - 1,
            shard_rows, 2 * shard_rows - 1, 2 * shard_rows, file.rows() - 1};
  }

  // The float32 bits a lookup of `ids` gives from a tier that holds `held`.
  [[nodiscard]] std::vector<std::uint32_t> expected(const std::vector<std::int64_t>& ids, RowRange held) const {
    std::vector<std::uint32_t> out;
    for (const std::int64_t id : ids) {
      const auto row = id >= held.begin && id < held.end
                           ? file.expected(id)
                           : std::vector<std::uint32_t>(static_cast<std::size_t>(file.head_dim()), 0);
      out.insert(out.end(), row.begin(), row.end());
    }
    return out;
  }

  ModelConfig config;
  SparseCheckpoint file;
  std::int64_t shard_rows;
  std::unique_ptr<PleCheckpoint> checkpoint;
};

std::vector<std::uint32_t> as_bits(const std::vector<std::uint8_t>& bytes) {
  std::vector<std::uint32_t> bits(bytes.size() / 4);
  std::memcpy(bits.data(), bytes.data(), bits.size() * 4);
  return bits;
}

// The host space, and a GPU's where there is one (the disk tier stages rows there).
std::vector<std::unique_ptr<StepSpace>> spaces() {
  std::vector<std::unique_ptr<StepSpace>> out;
  out.push_back(make_host_space());
  if (gpu_available()) out.push_back(make_tier_space(StorageTier::device));
  return out;
}

TEST(LargeRows, ConfigDerivesATableOfMoreThan2To32Rows) {
  const ModelConfig config = large_config("nvfp4");
  const TableSpec spec = derive_table_spec(config, 0);
  const reference::Layout layout = reference::layer_layout(config, 0);
  EXPECT_EQ(spec.head_sizes, layout.head_sizes);
  EXPECT_EQ(spec.head_offsets, layout.head_offsets);
  EXPECT_EQ(spec.padded_rows, layout.padded_rows);
  EXPECT_GT(spec.head_offsets.at(1), k_2_32);
  EXPECT_GT(spec.padded_rows, 2 * k_2_32);
  EXPECT_EQ(spec.padded_rows % 128, 0);
  EXPECT_EQ(spec.shard_rows, (spec.padded_rows + 2) / 3);
  EXPECT_GT(spec.shard_rows, k_2_31);
}

TEST(LargeRows, DiskTierReadsMarkerRowsAroundEveryBoundary) {
  const ScratchDir dir;
  for (const Case& k : k_cases) {
    SCOPED_TRACE(std::string(k.dtype) + ", " + std::to_string(k.parts) + " parts");
    const MarkedCheckpoint c(dir, k);
    if (!c.file.made()) GTEST_SKIP() << "no sparse file of " << c.file.file_bytes() << " bytes here";
    const std::int64_t rows = c.file.rows();
    ASSERT_EQ(c.checkpoint->table(0).layout.rows, rows);
    ASSERT_GT(c.file.file_bytes(), std::uint64_t{1} << 36);
    // Markers in reverse order and repeated, rows that hold nothing (holes), ids outside.
    std::vector<std::int64_t> ids = c.boundary_rows();
    std::reverse(ids.begin(), ids.end());
    ids.insert(ids.end(), {-1, k_2_32, k_2_32 + 1, rows, rows - 2, c.shard_rows + 1, rows + k_2_32, k_2_31 - 1});
    // And the rows the requests hash to (the second head's past 2^32).
    const std::vector<std::int64_t> hashed = reference_ids(c.config);
    ids.insert(ids.end(), hashed.begin(), hashed.end());
    std::vector<std::int64_t> distinct;
    for (const std::int64_t id : ids)
      if (id >= 0 && id < rows && std::find(distinct.begin(), distinct.end(), id) == distinct.end())
        distinct.push_back(id);
    for (const auto& space : spaces()) {
      const std::vector<RowRange> whole{{0, rows}};
      const auto store = make_row_store(StorageTier::disk, *c.checkpoint, whole, *space);
      const auto got = as_bits(lookup_from_host(*store, *space, 0, ids, OutDtype::f32));
      EXPECT_EQ(got, c.expected(ids, {0, rows}));
      EXPECT_EQ(static_cast<const DiskStore&>(*store).rows_read(0), static_cast<std::int64_t>(distinct.size()));
    }
  }
}

TEST(LargeRows, HostTierHoldsRangesAcross2To32AndAtTheEnd) {
  const ScratchDir dir;
  for (const Case& k : k_cases) {
    SCOPED_TRACE(std::string(k.dtype) + ", " + std::to_string(k.parts) + " parts");
    const MarkedCheckpoint c(dir, k);
    if (!c.file.made()) GTEST_SKIP() << "no sparse file of " << c.file.file_bytes() << " bytes here";
    const std::int64_t rows = c.file.rows();
    // Rows [2^32 - 8, 2^32 + 8): markers at 2^32 - 1, 2^32 and 2^32 + 5; the marker at
    // 2^31 and the row past the range read as zeros.
    const RowRange across{k_2_32 - 8, k_2_32 + 8};
    const HostTable table(*c.checkpoint, 0, across);
    const std::vector<std::int64_t> ids{k_2_32,     k_2_32 - 1, k_2_32 + 5, k_2_32 - 8, k_2_32 + 7,
                                        k_2_32 + 8, k_2_32 - 9, k_2_31,     k_2_32 + 1};
    std::vector<std::uint32_t> got(ids.size() * static_cast<std::size_t>(c.file.head_dim()), 0xCDCDCDCDu);
    table.lookup(ids, OutDtype::f32, got.data());
    EXPECT_EQ(got, c.expected(ids, across));

    // The table's last rows through the host tier's store and the step decode.
    const std::vector<RowRange> end{{rows - 16, rows}};
    const auto space = make_host_space();
    const auto store = make_row_store(StorageTier::host, *c.checkpoint, end, *space);
    const std::vector<std::int64_t> tail{rows - 1, rows - 16, rows - 17, rows, rows - 2, rows - 1};
    EXPECT_EQ(as_bits(lookup_from_host(*store, *space, 0, tail, OutDtype::f32)), c.expected(tail, end.front()));
  }
}

// The GPU tiers over a range of 2^31 + 16 rows that crosses 2^31, 2^32 and (three shards) a
// shard boundary, loaded from the sparse file (about 34 GB of each tier's memory): rank-local
// row indexes past 2^31 on the device tier, and the pinned tier's distinct-row gather (ids
// repeated past its grouping threshold) keying rows past 2^31. Where the GPU or host has not
// the memory, the tier's one-line refusal is the skip message.
TEST(LargeRows, GpuTiersHoldRangesOfMoreThan2To31Rows) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU";
  const ScratchDir dir;
  for (const Case& k : {k_cases[0], k_cases[2]}) {
    SCOPED_TRACE(std::string(k.dtype) + ", " + std::to_string(k.parts) + " parts");
    const MarkedCheckpoint c(dir, k);
    if (!c.file.made()) GTEST_SKIP() << "no sparse file of " << c.file.file_bytes() << " bytes here";
    const std::vector<RowRange> across{{k_2_31 - 8, k_2_32 + 8}};
    std::vector<std::int64_t> ids = c.boundary_rows();
    ids.insert(ids.end(), {k_2_31 - 9, k_2_32 + 7, k_2_32 + 8, -1, k_2_31 + 1});
    std::vector<std::int64_t> many;
    while (many.size() < (std::size_t{1} << 18))  // past k_pinned_group_min_ids (2^17)
      many.insert(many.end(), ids.begin(), ids.end());
    for (const StorageTier tier : {StorageTier::device, StorageTier::pinned}) {
      SCOPED_TRACE(to_string(tier));
      const auto space = make_tier_space(tier);
      std::unique_ptr<RowStore> store;
      try {
        store = make_row_store(tier, *c.checkpoint, across, *space);
      } catch (const InputError& e) {
        GTEST_SKIP() << e.what();
      }
      EXPECT_EQ(as_bits(lookup_from_host(*store, *space, 0, ids, OutDtype::f32)), c.expected(ids, across.front()));
      EXPECT_EQ(as_bits(lookup_from_host(*store, *space, 0, many, OutDtype::f32)), c.expected(many, across.front()));
    }
  }
}

TEST(LargeRows, HashedIdsLandInTheTable) {
  const ScratchDir dir;
  for (const Case& k : k_cases) {
    SCOPED_TRACE(std::string(k.dtype) + ", " + std::to_string(k.parts) + " parts");
    const MarkedCheckpoint c(dir, k);
    if (!c.file.made()) GTEST_SKIP() << "no sparse file of " << c.file.file_bytes() << " bytes here";
    const std::int64_t rows = c.file.rows();
    const TableSpec spec =
        hashing_spec(derive_table_spec(c.config, 0), c.checkpoint->table(0), c.checkpoint->path(), false);
    const std::vector<std::int64_t> ids = compute_ngram_ids(spec, batch_of(c.config, requests()));
    EXPECT_EQ(ids, reference_ids(c.config));
    const auto heads = static_cast<std::size_t>(spec.total_heads());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      EXPECT_GE(ids[i], i % heads == 0 ? 0 : spec.head_offsets[1]) << "id " << i;
      EXPECT_LT(ids[i], i % heads == 0 ? spec.head_offsets[1] : rows) << "id " << i;
    }
    EXPECT_GT(spec.head_offsets[1], k_2_32);  // so the second head's ids all lie past 2^32
    // Their rows are read by the disk tier in DiskTierReadsMarkerRowsAroundEveryBoundary
    // (a disk store of an NVFP4 table this size holds 8.6 GB of block scales).
  }
}

TEST(LargeRows, BalancedRangesTileTablesPast2To32Rows) {
  const std::int64_t table_rows = derive_table_spec(large_config("nvfp4"), 0).padded_rows;
  for (const std::int64_t rows : {k_2_32 - 1, k_2_32, k_2_32 + 1, table_rows, 3 * k_2_32 + 7, std::int64_t{1} << 62}) {
    for (const int parts : {1, 2, 3, 7, 8, 64, 1000, 4096, 1 << 20}) {
      SCOPED_TRACE(std::to_string(rows) + " rows, " + std::to_string(parts) + " parts");
      std::int64_t next = 0;
      const std::int64_t small = rows / parts;
      for (int index = 0; index < parts; ++index) {
        const RowRange r = balanced_range(rows, parts, index);
        ASSERT_EQ(r.begin, next) << "part " << index;
        ASSERT_TRUE(r.size() == small || r.size() == small + 1) << "part " << index << ": " << r.size() << " rows";
        // The larger parts come first.
        ASSERT_EQ(r.size() == small + 1, index < rows % parts) << "part " << index;
        next = r.end;
      }
      EXPECT_EQ(next, rows);
    }
  }
}

}  // namespace
