// Offsets past 2^32 bytes on the host side: the host tier over a 4.8 GB table
// (tests/store/large_table.hpp), the disk tier's pread at 4.5 GB of a sparse file, and the
// disk tier end to end on a sparse 4.9 GB safetensors checkpoint.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "io/pread_file.hpp"
#include "large_table.hpp"
#include "store/disk_store.hpp"
#include "store/host_table.hpp"
#include "store/row_store_factory.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

TEST(LargeOffsets, HostTableOver4GiB) {
  const HostTable table(LargeTable::source(), {0, LargeTable::rows});
  const std::vector<std::int64_t> ids = LargeTable::ids();
  const std::vector<std::uint16_t> expected = LargeTable::expected(ids);
  std::vector<std::uint16_t> got(expected.size(), 0xCDCD);
  table.lookup(ids, OutDtype::bf16, got.data());
  EXPECT_EQ(got, expected);
}

TEST(LargeOffsets, PreadPast4GiBAndAtTheEnd) {
  const ScratchDir dir;
  const auto path = dir / "sparse.bin";
  const std::uint64_t at = 4'500'000'000ull;
  const std::uint8_t marker[5] = {1, 2, 3, 4, 5};
  {
    const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, marker, sizeof marker, static_cast<off_t>(at)), static_cast<ssize_t>(sizeof marker));
    ::close(fd);
  }
  const PreadFile file(path);
  std::uint8_t got[5] = {};
  file.read_exact(at, got);
  EXPECT_EQ(std::vector<std::uint8_t>(got, got + 5), std::vector<std::uint8_t>(marker, marker + 5));
  EXPECT_THROW(file.read_exact(at + 1, got), InputError);  // runs past the end
}

// One bf16 table of 4 heads of 160 values and about 15.2M rows (4.9 GB). Only the rows in
// `stored` hold data (LargeTable's values); the rest are zeros, which the writer leaves as
// holes, so the file takes a few kilobytes of disk.
TEST(LargeOffsets, DiskTierReadsRowsPast4GiBOfACheckpoint) {
  const ModelConfig config = parse_model_config(nlohmann::json{{"vocab_size", 1000},
                                                               {"eos_token_id", 2},
                                                               {"num_hidden_layers", 2},
                                                               {"ngram_size", 3},
                                                               {"heads_per_ngram", 2},
                                                               {"ple_embed_dim", 4 * LargeTable::head_dim},
                                                               {"ngram_vocab_size_base", 3'800'000},
                                                               {"split_ngram_parts", 1},
                                                               {"ple_layer_ids", {1}}},
                                                "large config");
  TableSource source = synthetic_tables(config, RowFormat::bf16, 1).front();
  const std::int64_t rows = source.info.layout.rows;
  const std::int64_t boundary = (std::int64_t{1} << 32) / (LargeTable::head_dim * 2);  // first row past 2^32 B
  ASSERT_GT(rows, boundary + 1);
  const std::vector<std::int64_t> stored{0, boundary - 1, boundary, boundary + 1, rows / 2 + 7, rows - 1};
  source.rows = [&stored](std::int64_t begin, std::int64_t end, std::span<std::uint8_t> out, std::span<std::uint8_t>) {
    std::fill(out.begin(), out.end(), std::uint8_t{0});
    auto* v = reinterpret_cast<std::uint16_t*>(out.data());
    for (const std::int64_t r : stored)
      if (r >= begin && r < end)
        for (int j = 0; j < LargeTable::head_dim; ++j)
          v[static_cast<std::size_t>(r - begin) * LargeTable::head_dim + static_cast<std::size_t>(j)] =
              LargeTable::value(r, j);
  };
  const ScratchDir dir;
  write_checkpoint(dir / "ckpt", config, {source}, {});
  std::uintmax_t file_bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "ckpt"))
    if (entry.path().extension() == ".safetensors") file_bytes += entry.file_size();
  ASSERT_GT(file_bytes, std::uintmax_t{1} << 32);
  const auto checkpoint = open_ple_checkpoint(dir / "ckpt", config);
  ASSERT_EQ(checkpoint->table(0).layout.rows, rows);

  // The stored rows, a zero row between them, and ids outside the table.
  std::vector<std::int64_t> ids{rows - 1, boundary, -1, boundary + 1, 0, boundary - 1, rows / 2 + 7, rows, 12345};
  std::vector<std::uint16_t> expected(ids.size() * LargeTable::head_dim, 0);
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (std::find(stored.begin(), stored.end(), ids[i]) != stored.end())
      for (int j = 0; j < LargeTable::head_dim; ++j)
        expected[i * LargeTable::head_dim + static_cast<std::size_t>(j)] = LargeTable::value(ids[i], j);
  const auto space = make_tier_space(StorageTier::disk);
  DiskStore store(*checkpoint, *space);
  const std::vector<std::uint8_t> got = lookup_from_host(store, *space, 0, ids, OutDtype::bf16);
  ASSERT_EQ(got.size(), expected.size() * 2);
  EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size()), 0);
}

}  // namespace
