// The pages behind the host tier's tables as the report gives them (store/table_pages.hpp),
// agreed over the ranks, against each rank's own reading of /proc/self/smaps: tables of a
// rank's own and a node's shared copy, the tiers that keep no table in host memory left
// out, and the warning — one line a table, saying how to fix it — for a table no huge page
// backs (the fault plan's small pages). Runs on 1 to 3 ranks.

#include <gtest/gtest.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "ckpt/synthetic.hpp"
#include "core/fault_plan.hpp"
#include "core/smaps_reading.hpp"  // tests/core
#include "model/model_config.hpp"
#include "store/host_store.hpp"
#include "store/table_pages.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// One bf16 table of 16 heads of 16 values and about 2.1M rows (67 MB).
std::unique_ptr<PleCheckpoint> checkpoint() {
  const ModelConfig config = parse_model_config(nlohmann::json{{"vocab_size", 1000},
                                                               {"eos_token_id", 2},
                                                               {"num_hidden_layers", 2},
                                                               {"ngram_size", 3},
                                                               {"heads_per_ngram", 8},
                                                               {"ple_embed_dim", 256},
                                                               {"ngram_vocab_size_base", 131072},
                                                               {"split_ngram_parts", 1},
                                                               {"ple_layer_ids", {1}}},
                                                "pages config");
  return synthetic_checkpoint(config, RowFormat::bf16, 3);
}

// What this rank's own reading says of its bytes of the table: huge bytes, summed, and the
// lowest share, over the ranks.
struct Independent {
  double bytes = 0;
  double huge = 0;
  double lowest = 1;
};
Independent read_independently(std::span<const std::uint8_t> rows) {
  const SmapsMapping mapping = smaps_mapping_of(rows.data());
  const double share = mapping.huge_share();  // of the whole mapping that holds the rows
  Independent mine{static_cast<double>(rows.size()), share * static_cast<double>(rows.size()), share};
  Independent all;
  MPI_Allreduce(&mine.bytes, &all.bytes, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&mine.huge, &all.huge, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&mine.lowest, &all.lowest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

void expect_as_read(const HostTablePages& t, const Independent& read) {
  EXPECT_EQ(t.bytes, static_cast<std::uint64_t>(read.bytes));
  EXPECT_NEAR(t.huge_share(), read.huge / read.bytes, 0.02);
  EXPECT_NEAR(t.huge_share_min, read.lowest, 0.02);
  EXPECT_EQ(t.ranks_without_huge > 0, read.lowest == 0);
}

TEST(TablePages, ARanksOwnTablesAsEachRankReadsThem) {
  const auto ckpt = checkpoint();
  const std::int64_t rows = ckpt->table(0).layout.rows;
  const RowRange mine = balanced_range(rows, world_size(), world_rank());
  const HostStore store(*ckpt, std::vector<RowRange>{mine});
  const std::vector<HostTablePages> tables = measure_host_tables(MPI_COMM_WORLD, store, {{StorageTier::host}});
  ASSERT_EQ(tables.size(), 1u);
  const HostTablePages& t = tables.front();
  EXPECT_EQ(t.ple_index, 0);
  EXPECT_EQ(t.tier, StorageTier::host);
  EXPECT_FALSE(t.shared);
  EXPECT_EQ(t.ranks, world_size());
  EXPECT_EQ(static_cast<std::int64_t>(t.bytes),
            rows * static_cast<std::int64_t>(HostTable::bytes_for(ckpt->table(0).layout, {0, 1})));
  expect_as_read(t, read_independently(store.host_rows(0)));
  // Rank 0's pages lie on some node; no rank has a GPU here, so none has a home to compare with.
  EXPECT_GE(t.numa_node, 0);
  EXPECT_LT(t.home_share_min, 0);
  // A tier that keeps no table in host memory has none to measure.
  EXPECT_TRUE(measure_host_tables(MPI_COMM_WORLD, store, {{StorageTier::disk}}).empty());
}

TEST(TablePages, ANodesSharedCopyAsEachRankMapsIt) {
  const auto ckpt = checkpoint();
  const RowRange all{0, ckpt->table(0).layout.rows};
  const HostStore store(*ckpt, std::vector<RowRange>{all}, MPI_COMM_WORLD);  // the test's ranks share a machine
  const std::vector<HostTablePages> tables = measure_host_tables(MPI_COMM_WORLD, store, {{StorageTier::host}});
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables.front().shared, world_size() > 1);
  EXPECT_EQ(tables.front().ranks, world_size());
  expect_as_read(tables.front(), read_independently(store.host_rows(0)));
}

TEST(TablePages, ATableOnNoHugePageIsWarnedAboutOnceWithItsFix) {
  FaultPlan plan;
  plan.small_pages = true;
  set_fault_plan(plan);
  const auto ckpt = checkpoint();
  const RowRange mine = balanced_range(ckpt->table(0).layout.rows, world_size(), world_rank());
  const HostStore store(*ckpt, std::vector<RowRange>{mine});
  const std::vector<HostTablePages> tables = measure_host_tables(MPI_COMM_WORLD, store, {{StorageTier::host}});
  set_fault_plan({});
  ASSERT_EQ(tables.size(), 1u);
  const HostTablePages& t = tables.front();
  EXPECT_EQ(t.huge_bytes, 0u);
  EXPECT_EQ(t.ranks_without_huge, world_size());
  EXPECT_EQ(t.ask, "small");
  std::uint64_t largest = store.host_rows(0).size();
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(t.most_without_huge, largest);
  // The table is far below the 1 GB a job warns from; from its size on, one line.
  EXPECT_TRUE(huge_page_warnings(tables).empty());
  const std::vector<std::string> lines = huge_page_warnings(tables, largest);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines.front().rfind("host tier: table 0: no 2 MiB page backs it on " + std::to_string(world_size()) +
                                    " of " + std::to_string(world_size()),
                                0),
            0u)
      << lines.front();
  EXPECT_NE(lines.front().find("transparent_hugepage/enabled"), std::string::npos) << lines.front();
  EXPECT_NE(lines.front().find("vm.nr_hugepages"), std::string::npos) << lines.front();
  EXPECT_TRUE(huge_page_warnings(tables, largest + 1).empty());
}

TEST(TablePages, TheFixOfASharedCopyNamesTheNodesSharedMemory) {
  HostTablePages shared;
  shared.ple_index = 3;
  shared.tier = StorageTier::pinned;
  shared.shared = true;
  shared.ranks = 4;
  shared.ranks_without_huge = 2;
  shared.most_without_huge = 2'000'000'000;
  HostTablePages backed = shared;
  backed.ple_index = 4;
  backed.ranks_without_huge = 0;
  backed.most_without_huge = 0;
  const std::vector<std::string> lines = huge_page_warnings(std::vector<HostTablePages>{shared, backed});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines.front().rfind("pinned tier: table 3: no 2 MiB page backs it on 2 of 4 ranks (2.0 GB a rank)", 0), 0u)
      << lines.front();
  EXPECT_NE(lines.front().find("huge=advise /dev/shm"), std::string::npos) << lines.front();
  EXPECT_NE(lines.front().find("--no-shared-tables"), std::string::npos) << lines.front();
}

}  // namespace
