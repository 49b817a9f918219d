// The host's gather of a step's distinct rows (the pinned tier's host reads) against a plain
// copy row by row: every format, tables with block scales interleaved after the codes (as a
// GPU table keeps them, one pitch for both) and in a plane of their own (as the host tier
// keeps them), on one thread and several; and when `auto` gathers rather than reading
// through UVA.

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "format/row_format.hpp"
#include "kernels/host/row_gather_host.hpp"
#include "store/host_reads.hpp"

namespace {

using namespace pleshard;
using kernels::TableView;

struct Gathered {
  std::vector<std::uint8_t> rows, scales;
};

// Row r of the block: row offsets[r] of the table, byte by byte.
Gathered reference(const TableView& t, const std::vector<std::uint32_t>& offsets) {
  const std::size_t row_bytes = kernels::stored_row_bytes(t.format, t.head_dim);
  const std::size_t scale_bytes = t.block_scales != nullptr ? kernels::scale_row_bytes(t.format, t.head_dim) : 0;
  Gathered g{std::vector<std::uint8_t>(offsets.size() * row_bytes),
             std::vector<std::uint8_t>(offsets.size() * scale_bytes)};
  for (std::size_t r = 0; r < offsets.size(); ++r) {
    for (std::size_t b = 0; b < row_bytes; ++b) g.rows[r * row_bytes + b] = t.row_at(offsets[r])[b];
    for (std::size_t b = 0; b < scale_bytes; ++b) g.scales[r * scale_bytes + b] = t.scales_at(offsets[r])[b];
  }
  return g;
}

TEST(RowGatherHost, EqualsACopyRowByRow) {
  std::mt19937_64 rng(5);
  const std::int64_t rows = 3001;
  for (const RowFormat format :
       {RowFormat::f32, RowFormat::bf16, RowFormat::f16, RowFormat::fp8, RowFormat::nvfp4, RowFormat::fp8_e8m0}) {
    const int head_dim = 64;
    const std::size_t row_bytes = kernels::stored_row_bytes(format, head_dim);
    const std::size_t scale_bytes = kernels::scale_row_bytes(format, head_dim);
    for (const bool interleaved : {false, true}) {
      // Interleaved: each row's scales right after its codes, padded to 16 bytes.
      const std::size_t pitch = interleaved ? (row_bytes + scale_bytes + 15) / 16 * 16 : row_bytes;
      std::vector<std::uint8_t> table(static_cast<std::size_t>(rows) * pitch);
      std::vector<std::uint8_t> plane(interleaved ? 0 : static_cast<std::size_t>(rows) * scale_bytes);
      for (auto& b : table) b = static_cast<std::uint8_t>(rng());
      for (auto& b : plane) b = static_cast<std::uint8_t>(rng());
      const std::uint8_t* scales = scale_bytes == 0 ? nullptr : interleaved ? table.data() + row_bytes : plane.data();
      const TableView view{format,
                           head_dim,
                           500,
                           500 + rows,
                           table.data(),
                           scales,
                           1.0f,
                           interleaved ? pitch : 0,
                           interleaved && scale_bytes != 0 ? pitch : 0};
      for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{300}, std::size_t{2999}}) {
        std::vector<std::uint32_t> offsets(count);
        for (auto& o : offsets) o = static_cast<std::uint32_t>(rng() % static_cast<std::uint64_t>(rows));
        const Gathered want = reference(view, offsets);
        for (const std::size_t threads : {std::size_t{1}, std::size_t{3}}) {
          SCOPED_TRACE(std::string(to_string(format)) + (interleaved ? " interleaved" : " packed") + ", " +
                       std::to_string(count) + " rows on " + std::to_string(threads) + " threads");
          Gathered got{std::vector<std::uint8_t>(want.rows.size(), 0xCD),
                       std::vector<std::uint8_t>(want.scales.size(), 0xCD)};
          kernels::gather_rows_host(view, offsets.data(), static_cast<std::int64_t>(count), got.rows.data(),
                                    got.scales.data(), threads);
          EXPECT_EQ(got.rows, want.rows);
          EXPECT_EQ(got.scales, want.scales);
        }
      }
    }
  }
}

TEST(HostReads, AutoGathersLargeStepsAndNeverWhileCapturing) {
  EXPECT_FALSE(gathers_on_host(HostReads::automatic, k_host_gather_min_ids - 1, false));
  EXPECT_TRUE(gathers_on_host(HostReads::automatic, k_host_gather_min_ids, false));
  EXPECT_TRUE(gathers_on_host(HostReads::gather, 1, false));
  EXPECT_TRUE(gathers_on_host(HostReads::both, 1, false));
  EXPECT_FALSE(gathers_on_host(HostReads::uva, std::int64_t{1} << 30, false));
  EXPECT_TRUE(shares_with_gpu(HostReads::automatic));
  EXPECT_TRUE(shares_with_gpu(HostReads::both));
  EXPECT_FALSE(shares_with_gpu(HostReads::gather));
  EXPECT_FALSE(shares_with_gpu(HostReads::uva));
  for (const HostReads reads : {HostReads::automatic, HostReads::gather, HostReads::uva, HostReads::both}) {
    EXPECT_FALSE(gathers_on_host(reads, std::int64_t{1} << 20, true)) << to_string(reads);
    EXPECT_FALSE(gathers_on_host(reads, 0, false)) << to_string(reads);
    EXPECT_EQ(parse_host_reads(to_string(reads)), reads);
  }
  EXPECT_THROW((void)parse_host_reads("always"), std::exception);
}

// The split moves toward the side that finished last, one step at a time, within [0, 1];
// the host's rows are the share of the step's rows, rounded; a fixed share stays.
TEST(GatherShare, MovesTowardTheSlowerSideAndStaysInRange) {
  GatherShare share;
  EXPECT_DOUBLE_EQ(share.share(), 0.5);
  EXPECT_EQ(share.host_rows(1001), 501);  // 500.5 rounds away from zero
  EXPECT_EQ(share.host_rows(0), 0);
  share.settle(true);  // the GPU was done first: the host takes less
  EXPECT_DOUBLE_EQ(share.share(), 0.5 - GatherShare::k_step);
  share.settle(false);
  share.settle(false);
  EXPECT_DOUBLE_EQ(share.share(), 0.5 + GatherShare::k_step);
  for (int i = 0; i < 100; ++i) share.settle(false);
  EXPECT_DOUBLE_EQ(share.share(), 1.0);
  EXPECT_EQ(share.host_rows(77), 77);
  for (int i = 0; i < 100; ++i) share.settle(true);
  EXPECT_DOUBLE_EQ(share.share(), 0.0);
  EXPECT_EQ(share.host_rows(77), 0);
  // Steps alternating between the sides settle the share where they alternate.
  GatherShare balanced;
  for (int i = 0; i < 40; ++i) balanced.settle(balanced.share() > 0.3);
  EXPECT_NEAR(balanced.share(), 0.3, GatherShare::k_step);

  GatherShare fixed(0.25);
  fixed.settle(true);
  fixed.settle(true);
  EXPECT_DOUBLE_EQ(fixed.share(), 0.25);
  EXPECT_EQ(fixed.host_rows(100), 25);
  EXPECT_DOUBLE_EQ(GatherShare(7.0).share(), 1.0);
}

}  // namespace
