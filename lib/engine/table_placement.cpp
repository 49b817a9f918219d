#include "engine/table_placement.hpp"

#include <utility>
#include <vector>

#include "core/log.hpp"
#include "store/tier_memory.hpp"

namespace pleshard {

Placement asked_placement(const EngineOptions& options, int tables) {
  return options.placement.empty() ? Placement::every(options.tier, tables) : Placement{options.placement};
}

std::vector<TableDemand> table_demands(const PlacementInputs& in) {
  std::vector<TableDemand> demands;
  for (std::size_t d = 0; d < in.layouts.size(); ++d) {
    const std::span<const TableLayout> layout = in.layouts.subspan(d, 1);
    const std::span<const RowRange> shard = in.shards.subspan(d, 1);
    const bool profiled = d < in.profile.tables.size();
    TableDemand demand;
    for (const StorageTier tier : storage_tiers()) demand.tiers.push_back({tier, tier_memory_use(tier, layout, shard)});
    demand.lookups =
        profiled ? static_cast<double>(in.profile.tables[d].lookups) : static_cast<double>(in.specs[d].total_heads());
    demand.read_at_layer = in.specs[d].read_at_layer;
    demands.push_back(std::move(demand));
  }
  return demands;
}

PlacementChoice choose_placement(MPI_Comm world, const EngineOptions& options, const PlacementInputs& in) {
  const int tables = static_cast<int>(in.layouts.size());
  PlacementChoice choice;
  if (!options.auto_placement) {
    choice.placement = asked_placement(options, tables);
    return choice;
  }
  const std::vector<TableDemand> demands = table_demands(in);
  const PlacementCapacity capacity =
      measure_capacity(world, in.gpu, in.files, options.gpu_memory_limit, in.gpu ? in.workspace : 0, in.host_sharers);
  const PlacementPlan plan = plan_placement(demands, capacity);
  choice.placement = plan.placement;
  choice.report.automatic = true;
  choice.report.lines = plan.lines(demands);
  // The cache's slots; its staging and probe tables take the rest of what is left.
  if (!options.cache.enabled()) choice.report.cache_bytes = plan.cache_bytes / 20 * 19;
  return choice;
}

void log_placement(const PlacementReport& report) {
  for (const std::string& line : report.lines) log_info("placement auto: " + line);
  if (report.cache_bytes > 0)
    log_info("placement auto: row cache of " + std::to_string(report.cache_bytes) +
             " bytes of GPU memory in front of the tables not on the device");
}

std::uint64_t step_memory_estimate(const EngineOptions& options, int layers, int heads, std::int64_t width, int slots) {
  // Per token of a slot: every head's id, key and position (8 bytes each, twice over for the
  // exchange's copies), and each layer's embedding in f32 for every output slot and two
  // staging copies. Doubled, and 256 MiB for what scales with nothing.
  const auto tokens = static_cast<std::uint64_t>(options.max_tokens) * static_cast<std::uint64_t>(slots);
  const auto ids = static_cast<std::uint64_t>(layers) * static_cast<std::uint64_t>(heads) * 8 * 3 * 2;
  const auto rows = static_cast<std::uint64_t>(layers) * static_cast<std::uint64_t>(width) * 4 *
                    static_cast<std::uint64_t>(options.output_slots + 2);
  return 2 * tokens * (ids + rows) + (std::uint64_t{256} << 20);
}

}  // namespace pleshard
