// What a tier's tables take, and the refusal, before anything is allocated, of tables the
// node's memory cannot hold: one line naming the tier and both byte counts.

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "core/host_memory.hpp"
#include "store/tier_memory.hpp"

namespace {

using namespace pleshard;

TEST(TierMemory, BytesFollowEachTiersRowLayout) {
  const TableLayout nvfp4{RowFormat::nvfp4, 160, 1000};  // 80 code bytes + 10 scale bytes
  const TableLayout bf16{RowFormat::bf16, 160, 1000};
  EXPECT_EQ(gpu_row_pitch(nvfp4), 96u);  // interleaved, padded to 16 bytes
  EXPECT_EQ(gpu_row_pitch(bf16), 320u);
  const TableLayout layouts[] = {nvfp4, bf16};
  const RowRange ranges[] = {{100, 300}, {0, 10}};
  EXPECT_EQ(tier_bytes(StorageTier::host, layouts, ranges), 200u * 90 + 10u * 320);
  EXPECT_EQ(tier_bytes(StorageTier::pinned, layouts, ranges), 200u * 96 + 10u * 320);
  EXPECT_EQ(tier_bytes(StorageTier::device, layouts, ranges), 200u * 96 + 10u * 320);
  EXPECT_EQ(tier_bytes(StorageTier::disk, layouts, ranges), 200u * 10);                // the range's nvfp4 block scales
  EXPECT_EQ(load_bytes(StorageTier::pinned, layouts, ranges), 200u * 90 + 10u * 320);  // no padding
  EXPECT_EQ(load_bytes(StorageTier::disk, layouts, ranges), 200u * 10);
  const RowRange whole[] = {{0, 1000}, {0, 1000}};  // the disk tier alone: whole tables
  EXPECT_EQ(tier_bytes(StorageTier::disk, layouts, whole), 1000u * 10);

  // FP8-E8M0: 256 code bytes + 8 scale bytes, and 160 + 5.
  const TableLayout e8m0{RowFormat::fp8_e8m0, 256, 2000};
  const TableLayout e8m0_160{RowFormat::fp8_e8m0, 160, 500};
  EXPECT_EQ(gpu_row_pitch(e8m0), 272u);  // interleaved, padded to 16 bytes
  EXPECT_EQ(gpu_row_pitch(e8m0_160), 176u);
  const TableLayout mixed[] = {e8m0, e8m0_160, nvfp4};
  const RowRange mixed_ranges[] = {{0, 100}, {10, 20}, {0, 1}};
  EXPECT_EQ(tier_bytes(StorageTier::host, mixed, mixed_ranges), 100u * 264 + 10u * 165 + 90u);
  EXPECT_EQ(tier_bytes(StorageTier::device, mixed, mixed_ranges), 100u * 272 + 10u * 176 + 96u);
  EXPECT_EQ(tier_bytes(StorageTier::disk, mixed, mixed_ranges), 100u * 8 + 10u * 5 + 1u * 10);
  EXPECT_EQ(load_bytes(StorageTier::device, mixed, mixed_ranges), 100u * 264 + 10u * 165 + 90u);
}

TEST(TierMemory, TablesLargerThanTheNodesMemoryAreRefused) {
  const std::uint64_t available = available_host_bytes();
  ASSERT_GT(available, 0u) << "MemAvailable unreadable";
  require_tier_memory(MPI_COMM_WORLD, StorageTier::host, 1u << 20);
  for (const StorageTier tier : {StorageTier::host, StorageTier::pinned, StorageTier::disk}) {
    try {
      require_tier_memory(MPI_COMM_WORLD, tier, available * 4);
      ADD_FAILURE() << to_string(tier) << ": not refused";
    } catch (const Error& e) {  // agreed by every rank
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(std::string(to_string(tier)) + " tier: the tables of 1 rank on this node need " +
                               std::to_string(available * 4) + " bytes of host memory",
                           0),
                0u)
          << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
  require_tier_memory(MPI_COMM_WORLD, StorageTier::disk, 0);  // no NVFP4 table: nothing in memory
  // What a step keeps beside the tables is named by the memory it takes, not by a tier.
  try {
    require_space_memory(MPI_COMM_WORLD, {MemoryKind::host, available * 4}, "the row caches", "a smaller cache");
    ADD_FAILURE() << "row caches of 4x MemAvailable: not refused";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("host memory: the row caches of 1 rank on this node need " + std::to_string(available * 4) +
                             " bytes of host memory",
                         0),
              0u)
        << what;
    EXPECT_NE(what.find("; a smaller cache)"), std::string::npos) << what;
  }
  // The tables' own check counts the reserved 2 MiB pages still free too, and says so.
  try {
    require_table_memory(MPI_COMM_WORLD, StorageTier::host, available * 4);
    ADD_FAILURE() << "tables of 4x MemAvailable: not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("and free reserved 2 MiB pages"), std::string::npos) << e.what();
  }
}

}  // namespace
