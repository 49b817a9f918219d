// Placements: `--placement` parsed and refused (an unknown table, a table placed twice or not
// at all, a tier the build or machine lacks, tiers that cannot share a step), and the
// automatic plan as a pure function of given capacities: device first, then pinned (host
// without a GPU), then disk, the table read at the earliest decoder layer first and, among
// tables read at one layer, the hottest first, the GPU memory left as the row cache; refused
// when a table fits nowhere. The real sizes: DeepSeek-V4.1-Flash's two Engram tables of
// 101.4 GB on one H200 machine.

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "store/auto_placement.hpp"
#include "store/placement.hpp"

namespace {

using namespace pleshard;

constexpr std::uint64_t k_gb = 1'000'000'000;

void expect_refused(const std::string& text, int tables, const std::string& fragment) {
  try {
    (void)parse_placement(text, tables);
    ADD_FAILURE() << "accepted --placement " << text;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Placement, ParsesOneTierOrOnePerTable) {
  const Placement every = parse_placement("disk", 3);
  EXPECT_EQ(every.tiers, (std::vector<StorageTier>(3, StorageTier::disk)));
  EXPECT_TRUE(every.uniform());
  EXPECT_EQ(every.describe(), "disk");
  const Placement mixed = parse_placement("1=disk,0=host", 2);
  EXPECT_EQ(mixed.tiers, (std::vector<StorageTier>{StorageTier::host, StorageTier::disk}));
  EXPECT_FALSE(mixed.uniform());
  EXPECT_EQ(mixed.describe(), "0=host,1=disk");
  // Disk tables beside host ones hold their rank's rows (not whole tables), and a cache may
  // stand in front of them.
  const TierCapabilities can = mixed.capabilities();
  EXPECT_FALSE(can.whole_tables);
  EXPECT_TRUE(can.cacheable);
  EXPECT_TRUE(can.reads_files);
  EXPECT_FALSE(can.loads_collectively);
  EXPECT_FALSE(can.graph_capturable);
  EXPECT_TRUE(parse_placement("0=disk,1=disk", 2).capabilities().whole_tables);
  EXPECT_TRUE(parse_placement("host", 2).capabilities().loads_collectively);
}

TEST(Placement, RefusesWhatIsWrong) {
  expect_refused("2=host,0=host,1=host", 2, "table 2 does not exist; the model has 2 tables (0 to 1)");
  expect_refused("0=host,0=disk,1=host", 2, "table 0 is placed twice");
  expect_refused("0=host", 2, "table 1 is not placed");
  expect_refused("0=host,1", 2, "'1' is not TABLE=TIER");
  expect_refused("x=host,1=host", 2, "'x' is not a table's index");
  expect_refused("-1=host,1=host", 2, "'-1' is not a table's index");
  expect_refused("0=tape,1=host", 2, "table 0's tier \"tape\": expected");
  expect_refused("tape", 2, "--placement \"tape\": expected");
  expect_refused("0=host,1=disk,", 2, "'' is not TABLE=TIER");
  if (!gpu_available()) {
    expect_refused("0=device,1=host", 2, "no GPU ");
    expect_refused("pinned", 2, "no GPU ");
  }
  // The host tier decodes on the host, the device and pinned tiers on the GPU.
  try {
    check_placement({{StorageTier::host, StorageTier::pinned}});
    ADD_FAILURE() << "host beside pinned accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("one step decodes in one place"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(check_placement({{StorageTier::device, StorageTier::pinned, StorageTier::disk}}));
  EXPECT_NO_THROW(check_placement({{StorageTier::host, StorageTier::disk}}));
}

// A table's demand on the built-in tiers: `gpu` bytes as the GPU tiers keep it (in GPU memory
// on the device tier, in host memory on the pinned one), `host` bytes on the host tier and
// `disk` bytes of block scales in host memory on the disk tier.
TableDemand demand(std::uint64_t gpu, std::uint64_t host, std::uint64_t disk, double lookups) {
  TableDemand t;
  t.tiers = {{StorageTier::device, {{MemoryKind::gpu, gpu}}},
             {StorageTier::pinned, {{MemoryKind::host, gpu}}},
             {StorageTier::host, {{MemoryKind::host, host}}},
             {StorageTier::disk, {{MemoryKind::host, disk}}}};
  t.lookups = lookups;
  return t;
}

TableDemand table(std::uint64_t gb, double lookups = 1) {
  return demand(gb * k_gb, gb * k_gb, gb * k_gb / 33, lookups);
}

TEST(AutoPlacement, DeviceFirstThenPinnedThenDiskWithTheRestAsCache) {
  const PlacementCapacity h200{true, true, 130 * k_gb, 118 * k_gb};
  // DeepSeek-V4.1-Flash: two tables of 101.4 GB; one fits the GPU, the other pinned memory,
  // and the GPU memory left caches rows of the pinned one.
  const TableDemand engram = demand(101'400'000'000, 101'400'000'000, 3'073'000'000, 48);
  const std::vector<TableDemand> v41{engram, engram};
  const PlacementPlan plan = plan_placement(v41, h200);
  EXPECT_EQ(plan.placement.tiers, (std::vector<StorageTier>{StorageTier::device, StorageTier::pinned}));
  EXPECT_EQ(plan.device_left, 130 * k_gb - engram.bytes_on(StorageTier::device));
  EXPECT_EQ(plan.cache_bytes, plan.device_left);
  EXPECT_EQ(plan.host_left, 118 * k_gb - engram.bytes_on(StorageTier::device));
  const std::vector<std::string> lines = plan.lines(v41);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("table 0: device, 101 GB (fits the GPU's 130 GB left", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("table 1: pinned, 101 GB (the GPU has 28.6 GB left; fits host memory's 118 GB", 0), 0u)
      << lines[1];
  // Everything on the device: no cache.
  const PlacementPlan small = plan_placement(std::vector<TableDemand>{table(10), table(20)}, h200);
  EXPECT_EQ(small.placement.tiers, (std::vector<StorageTier>(2, StorageTier::device)));
  EXPECT_EQ(small.cache_bytes, 0u);
  // Neither the GPU nor host memory: the disk, which keeps the block scales in host memory.
  const PlacementPlan third = plan_placement(std::vector<TableDemand>{table(100), table(100), table(100)}, h200);
  EXPECT_EQ(third.placement.tiers,
            (std::vector<StorageTier>{StorageTier::device, StorageTier::pinned, StorageTier::disk}));
  EXPECT_EQ(third.host_left, 18 * k_gb - 100 * k_gb / 33);
}

TEST(AutoPlacement, TheHottestTableTakesTheDevice) {
  const PlacementCapacity gpu{true, true, 60 * k_gb, 500 * k_gb};
  // Equal sizes: the one with more lookups per byte (a profile's count, or more heads).
  const PlacementPlan plan = plan_placement(std::vector<TableDemand>{table(50, 1), table(50, 3)}, gpu);
  EXPECT_EQ(plan.placement.tiers, (std::vector<StorageTier>{StorageTier::pinned, StorageTier::device}));
  EXPECT_NE(plan.why[1].find("hottest 1 of 2"), std::string::npos) << plan.why[1];
  // Equal lookups: the smaller table has more per byte and goes first.
  const PlacementPlan sized = plan_placement(std::vector<TableDemand>{table(55), table(40)}, gpu);
  EXPECT_EQ(sized.placement.tiers, (std::vector<StorageTier>{StorageTier::pinned, StorageTier::device}));
}

TableDemand read_at(int layer, std::uint64_t gb, double lookups) {
  TableDemand t = table(gb, lookups);
  t.read_at_layer = layer;
  return t;
}

TEST(AutoPlacement, TheTableReadFirstTakesTheDeviceHoweverHotTheOthers) {
  const PlacementCapacity gpu{true, true, 60 * k_gb, 500 * k_gb};
  // DeepSeek-V4.1's layers 1 and 14, the later table three times as hot: the device still
  // goes to the one read first, in either table order.
  const PlacementPlan plan = plan_placement(std::vector<TableDemand>{read_at(1, 50, 1), read_at(14, 50, 3)}, gpu);
  EXPECT_EQ(plan.placement.tiers, (std::vector<StorageTier>{StorageTier::device, StorageTier::pinned}));
  EXPECT_EQ(plan.why[0], "fits the GPU's 60 GB left, read first (decoder layer 1, 0-based)");
  EXPECT_EQ(plan.why[1],
            "the GPU has 10 GB left; fits host memory's 500 GB left, read 2nd of 2 (decoder layer 14, 0-based)");
  const PlacementPlan swapped = plan_placement(std::vector<TableDemand>{read_at(14, 50, 3), read_at(1, 50, 1)}, gpu);
  EXPECT_EQ(swapped.placement.tiers, (std::vector<StorageTier>{StorageTier::pinned, StorageTier::device}));
  // Nor does the later table's being smaller, and so hotter per byte.
  const PlacementPlan big = plan_placement(std::vector<TableDemand>{read_at(1, 55, 1), read_at(14, 40, 1)}, gpu);
  EXPECT_EQ(big.placement.tiers, (std::vector<StorageTier>{StorageTier::device, StorageTier::pinned}));
  // Host memory too goes in reading order: the table read last is left the disk.
  const PlacementCapacity tight{true, true, 60 * k_gb, 60 * k_gb};
  const PlacementPlan three =
      plan_placement(std::vector<TableDemand>{read_at(9, 50, 9), read_at(3, 50, 1), read_at(6, 50, 5)}, tight);
  EXPECT_EQ(three.placement.tiers,
            (std::vector<StorageTier>{StorageTier::disk, StorageTier::device, StorageTier::pinned}));
  EXPECT_NE(three.why[0].find("read 3rd of 3 (decoder layer 9, 0-based)"), std::string::npos) << three.why[0];
}

TEST(AutoPlacement, TablesReadAtOneLayerGoHottestFirst) {
  const PlacementCapacity gpu{true, true, 60 * k_gb, 500 * k_gb};
  // Layer 3's two tables: the hotter takes the device; layer 7's, hotter still, comes after both.
  const PlacementPlan plan =
      plan_placement(std::vector<TableDemand>{read_at(3, 50, 1), read_at(3, 50, 3), read_at(7, 50, 9)}, gpu);
  EXPECT_EQ(plan.placement.tiers,
            (std::vector<StorageTier>{StorageTier::pinned, StorageTier::device, StorageTier::pinned}));
  EXPECT_NE(plan.why[1].find("read first (decoder layer 3, 0-based; hottest 1 of 2 read there)"), std::string::npos)
      << plan.why[1];
  EXPECT_NE(plan.why[0].find("read first (decoder layer 3, 0-based; hottest 2 of 2 read there)"), std::string::npos)
      << plan.why[0];
  EXPECT_NE(plan.why[2].find("read 2nd of 2 (decoder layer 7, 0-based)"), std::string::npos) << plan.why[2];
  // Every table read at one layer: heat alone, and the why says only that.
  const PlacementPlan same = plan_placement(std::vector<TableDemand>{read_at(5, 50, 1), read_at(5, 50, 3)}, gpu);
  EXPECT_EQ(same.placement.tiers, (std::vector<StorageTier>{StorageTier::pinned, StorageTier::device}));
  EXPECT_EQ(same.why[1], "fits the GPU's 60 GB left, hottest 1 of 2");
}

TEST(AutoPlacement, WithoutAGpuHostThenDisk) {
  const PlacementCapacity cpu{false, true, 0, 30 * k_gb};
  const PlacementPlan plan = plan_placement(std::vector<TableDemand>{table(20), table(20)}, cpu);
  EXPECT_EQ(plan.placement.tiers, (std::vector<StorageTier>{StorageTier::host, StorageTier::disk}));
  EXPECT_EQ(plan.cache_bytes, 0u);
  EXPECT_TRUE(plan.placement.capabilities().reads_files);
}

TEST(AutoPlacement, RefusedWhenATableFitsNowhere) {
  const auto refused = [](const std::vector<TableDemand>& tables, const PlacementCapacity& c,
                          const std::string& fragment) {
    try {
      (void)plan_placement(tables, c);
      ADD_FAILURE() << "a plan that does not fit was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  // A synthetic checkpoint has no files for the disk tier.
  refused({table(40), table(40)}, {true, false, 50 * k_gb, 30 * k_gb},
          "--placement auto: table 1 fits nowhere: it takes 40 GB of GPU memory (10 GB left) or of host memory "
          "(30 GB left); a synthetic checkpoint has no files");
  // Even the disk tier's scales exceed host memory.
  refused({table(400)}, {false, true, 0, 10 * k_gb}, "or 12.1 GB of host memory on the disk tier");
}

}  // namespace
