#include "engine/table_placement.hpp"

#include <vector>

#include "core/log.hpp"
#include "store/auto_placement.hpp"
#include "store/tier_memory.hpp"

namespace pleshard {

Placement asked_placement(const EngineOptions& options, int tables) {
  return options.placement.empty() ? Placement::every(options.tier, tables) : Placement{options.placement};
}

PlacementChoice choose_placement(MPI_Comm world, int rank, const EngineOptions& options, const PlacementInputs& in) {
  const int tables = static_cast<int>(in.layouts.size());
  PlacementChoice choice;
  if (!options.auto_placement) {
    choice.placement = asked_placement(options, tables);
    return choice;
  }
  std::vector<TableDemand> demands;
  for (int d = 0; d < tables; ++d) {
    const std::span<const TableLayout> layout = in.layouts.subspan(static_cast<std::size_t>(d), 1);
    const std::span<const RowRange> shard = in.shards.subspan(static_cast<std::size_t>(d), 1);
    const bool profiled = static_cast<std::size_t>(d) < in.profile.tables.size();
    demands.push_back({tier_bytes(StorageTier::device, layout, shard), tier_bytes(StorageTier::host, layout, shard),
                       tier_bytes(StorageTier::disk, layout, shard),
                       profiled ? static_cast<double>(in.profile.tables[static_cast<std::size_t>(d)].lookups)
                                : static_cast<double>(in.heads[static_cast<std::size_t>(d)])});
  }
  const PlacementCapacity capacity =
      measure_capacity(world, in.gpu, in.files, options.gpu_memory_limit, in.gpu ? in.workspace : 0, in.host_sharers);
  const PlacementPlan plan = plan_placement(demands, capacity);
  choice.placement = plan.placement;
  choice.report.automatic = true;
  choice.report.lines = plan.lines(demands);
  // The cache's slots; its staging and probe tables take the rest of what is left.
  if (!options.cache.enabled()) choice.report.cache_bytes = plan.cache_bytes / 20 * 19;
  if (rank == 0 && options.log_placement) {
    for (const std::string& line : choice.report.lines) log_info("placement auto: " + line);
    if (choice.report.cache_bytes > 0)
      log_info("placement auto: row cache of " + std::to_string(choice.report.cache_bytes) +
               " bytes of GPU memory in front of the tables not on the device");
  }
  return choice;
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
