// The automatic placement's input as the engine makes it (table_demands) from a real config:
// DeepSeek-V4.1-Flash's two Engram tables, read at decoder layers 1 and 14, on a GPU with room
// for one. The table of layer 1 takes the GPU although a profile says the other is hotter, and
// the line printed before the load says why. (The whole `run` needs a GPU to place tables on
// the device; this is the same plan from the same specs, without one.)

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/table_placement.hpp"
#include "model/model_config.hpp"
#include "model/table_spec.hpp"

namespace {

using namespace pleshard;

TEST(TablePlacement, DeepseekV41sLayerOneTableTakesTheGpuItHasRoomForOne) {
  const ModelConfig config = load_model_config(PLESHARD_SOURCE_DIR "/jobs/models/deepseek-v4.1-flash/config.json");
  const std::vector<TableSpec> specs = derive_table_specs(config);
  ASSERT_EQ(specs.size(), 2u);
  std::vector<TableLayout> layouts;
  std::vector<RowRange> shards;
  for (const TableSpec& spec : specs) {
    layouts.push_back({RowFormat::fp8_e8m0, spec.head_dim, spec.padded_rows});
    shards.push_back({0, spec.padded_rows});
  }
  // A profile in which the layer-14 table is looked up a hundred times as often.
  RowProfile profile;
  profile.tables.resize(2);
  profile.tables[0].lookups = 1'000;
  profile.tables[1].lookups = 100'000;
  const std::vector<TableDemand> demands = table_demands({layouts, shards, specs, profile, true, true, 0, 1});
  ASSERT_EQ(demands.size(), 2u);
  EXPECT_EQ(demands[0].read_at_layer, 1);
  EXPECT_EQ(demands[1].read_at_layer, 14);
  EXPECT_EQ(demands[1].lookups, 100'000);
  EXPECT_GT(demands[0].bytes_on(StorageTier::device), 100'000'000'000u);  // 101 GB and more, as the GPU tiers keep them

  // Room on the GPU for either table, not both; host memory for the other.
  const std::uint64_t one =
      std::max(demands[0].bytes_on(StorageTier::device), demands[1].bytes_on(StorageTier::device));
  const PlacementPlan plan = plan_placement(demands, {true, true, one, 2 * one});
  EXPECT_EQ(plan.placement.tiers, (std::vector<StorageTier>{StorageTier::device, StorageTier::pinned}));
  const std::vector<std::string> lines = plan.lines(demands);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("table 0: device, ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("read first (decoder layer 1, 0-based)"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1].rfind("table 1: pinned, ", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find("read 2nd of 2 (decoder layer 14, 0-based)"), std::string::npos) << lines[1];
}

}  // namespace
