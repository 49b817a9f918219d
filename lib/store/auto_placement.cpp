#include "store/auto_placement.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "core/error.hpp"

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
  // The hottest first: most lookups per byte of GPU memory.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto heat = [&](std::size_t d) {
    return tables[d].lookups / static_cast<double>(std::max<std::uint64_t>(1, tables[d].gpu_bytes));
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return heat(a) > heat(b); });
  std::uint64_t device = capacity.gpu ? capacity.device_bytes : 0;
  std::uint64_t host = capacity.host_bytes;
  const StorageTier host_tier = capacity.gpu ? StorageTier::pinned : StorageTier::host;
  for (std::size_t rank = 0; rank < n; ++rank) {
    const std::size_t d = order[rank];
    const TableDemand& t = tables[d];
    const std::string hottest = n > 1 ? ", hottest " + std::to_string(rank + 1) + " of " + std::to_string(n) : "";
    if (capacity.gpu && t.gpu_bytes <= device) {
      plan.placement.tiers[d] = StorageTier::device;
      plan.why[d] = "fits the GPU's " + gb(device) + " left" + hottest;
      device -= t.gpu_bytes;
    } else if (demand_on(t, host_tier) <= host) {
      plan.placement.tiers[d] = host_tier;
      plan.why[d] = (capacity.gpu ? "the GPU has " + gb(device) + " left; " : std::string()) + "fits host memory's " +
                    gb(host) + " left" + hottest;
      host -= demand_on(t, host_tier);
    } else if (capacity.files && t.disk_bytes <= host) {
      plan.placement.tiers[d] = StorageTier::disk;
      plan.why[d] = (capacity.gpu ? "the GPU has " + gb(device) + " left, " : std::string()) + "host memory " +
                    gb(host) + "; read from the checkpoint's files" + hottest;
      host -= t.disk_bytes;
    } else {
      throw InputError("--placement auto: table " + std::to_string(d) + " fits nowhere: it takes " + gb(t.gpu_bytes) +
                       (capacity.gpu ? " of GPU memory (" + gb(device) + " left) or" : "") + " of host memory (" +
                       gb(host) + " left)" +
                       (capacity.files ? ", or " + gb(t.disk_bytes) + " of host memory on the disk tier"
                                       : "; a synthetic checkpoint has no files for the disk tier") +
                       " (use more ranks, or a larger --gpu-memory-limit)");
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
