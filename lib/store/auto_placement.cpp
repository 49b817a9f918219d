#include "store/auto_placement.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "core/error.hpp"
#include "core/option_names.hpp"

namespace pleshard {

namespace {

std::string gb(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g GB", static_cast<double>(bytes) * 1e-9);
  return text;
}

std::uint64_t demand_on(const TableDemand& t, StorageTier tier) {
  switch (tier) {
    case StorageTier::device:
    case StorageTier::pinned:
      return t.gpu_bytes;
    case StorageTier::host:
      return t.host_bytes;
    case StorageTier::disk:
      return t.disk_bytes;
  }
  return 0;
}

// "2nd", "3rd", "11th": a place in the reading order.
std::string ordinal(std::size_t place) {
  const std::size_t tens = place % 100;
  const char* suffix = tens >= 11 && tens <= 13 ? "th"
                       : place % 10 == 1        ? "st"
                       : place % 10 == 2        ? "nd"
                       : place % 10 == 3        ? "rd"
                                                : "th";
  return std::to_string(place) + suffix;
}

// Why the table at `order[at]` comes where it does: when a step reads it (where the tables are
// not all read at one layer) and how hot it is beside the tables read at the same layer.
std::string place_in_order(std::span<const TableDemand> tables, std::span<const std::size_t> order, std::size_t at) {
  const int layer = tables[order[at]].read_at_layer;
  std::vector<int> layers;
  for (const TableDemand& t : tables) layers.push_back(t.read_at_layer);
  std::sort(layers.begin(), layers.end());
  const auto same = std::equal_range(layers.begin(), layers.end(), layer);
  const auto sharing = static_cast<std::size_t>(same.second - same.first);
  layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
  // The order keeps a layer's tables together, hottest first.
  std::size_t first = at;
  while (first > 0 && tables[order[first - 1]].read_at_layer == layer) --first;
  const std::string hottest = "hottest " + std::to_string(at - first + 1) + " of " + std::to_string(sharing);
  if (layers.size() == 1) return sharing > 1 ? ", " + hottest : "";
  const auto place = static_cast<std::size_t>(std::lower_bound(layers.begin(), layers.end(), layer) - layers.begin());
  return std::string(", read ") + (place == 0 ? "first" : ordinal(place + 1) + " of " + std::to_string(layers.size())) +
         " (decoder layer " + std::to_string(layer) + ", 0-based" +
         (sharing > 1 ? "; " + hottest + " read there" : "") + ")";
}

}  // namespace

std::vector<std::string> PlacementPlan::lines(std::span<const TableDemand> tables) const {
  std::vector<std::string> out;
  for (int d = 0; d < placement.tables(); ++d) {
    const StorageTier tier = placement.tier(d);
    out.push_back("table " + std::to_string(d) + ": " + to_string(tier) + ", " +
                  gb(demand_on(tables[static_cast<std::size_t>(d)], tier)) + " (" + why[static_cast<std::size_t>(d)] +
                  ")");
  }
  return out;
}

PlacementPlan plan_placement(std::span<const TableDemand> tables, const PlacementCapacity& capacity) {
  const std::size_t n = tables.size();
  PlacementPlan plan;
  plan.placement.tiers.assign(n, StorageTier::disk);
  plan.why.assign(n, "");
  // The earliest read first; at one layer, the hottest first: most lookups per byte of GPU memory.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto heat = [&](std::size_t d) {
    return tables[d].lookups / static_cast<double>(std::max<std::uint64_t>(1, tables[d].gpu_bytes));
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (tables[a].read_at_layer != tables[b].read_at_layer) return tables[a].read_at_layer < tables[b].read_at_layer;
    return heat(a) > heat(b);
  });
  std::uint64_t device = capacity.gpu ? capacity.device_bytes : 0;
  std::uint64_t host = capacity.host_bytes;
  const StorageTier host_tier = capacity.gpu ? StorageTier::pinned : StorageTier::host;
  for (std::size_t rank = 0; rank < n; ++rank) {
    const std::size_t d = order[rank];
    const TableDemand& t = tables[d];
    const std::string place = place_in_order(tables, order, rank);
    if (capacity.gpu && t.gpu_bytes <= device) {
      plan.placement.tiers[d] = StorageTier::device;
      plan.why[d] = "fits the GPU's " + gb(device) + " left" + place;
      device -= t.gpu_bytes;
    } else if (demand_on(t, host_tier) <= host) {
      plan.placement.tiers[d] = host_tier;
      plan.why[d] = (capacity.gpu ? "the GPU has " + gb(device) + " left; " : std::string()) + "fits host memory's " +
                    gb(host) + " left" + place;
      host -= demand_on(t, host_tier);
    } else if (capacity.files && t.disk_bytes <= host) {
      plan.placement.tiers[d] = StorageTier::disk;
      plan.why[d] = (capacity.gpu ? "the GPU has " + gb(device) + " left, " : std::string()) + "host memory " +
                    gb(host) + "; read from the checkpoint's files" + place;
      host -= t.disk_bytes;
    } else {
      throw InputError(option_is(Option::placement, "auto") + ": table " + std::to_string(d) +
                       " fits nowhere: it takes " + gb(t.gpu_bytes) +
                       (capacity.gpu ? " of GPU memory (" + gb(device) + " left) or" : "") + " of host memory (" +
                       gb(host) + " left)" +
                       (capacity.files ? ", or " + gb(t.disk_bytes) + " of host memory on the disk tier"
                                       : "; a synthetic checkpoint has no files for the disk tier") +
                       " (use more ranks, or a larger " + option_name(Option::gpu_memory_limit) + ")");
    }
  }
  plan.device_left = device;
  plan.host_left = host;
  if (plan.placement.uses(StorageTier::pinned) || (capacity.gpu && plan.placement.uses(StorageTier::disk)))
    plan.cache_bytes = device;
  check_placement(plan.placement);
  return plan;
}

}  // namespace pleshard
