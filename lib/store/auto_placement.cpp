#include "store/auto_placement.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/option_names.hpp"
#include "store/tier_descriptor.hpp"

namespace pleshard {

namespace {

std::string gb(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g GB", static_cast<double>(bytes) * 1e-9);
  return text;
}

// What is left of each kind of memory while tables are placed.
class MemoryLeft {
 public:
  explicit MemoryLeft(const PlacementCapacity& capacity)
      : bytes_{capacity.gpu ? capacity.device_bytes : 0, capacity.host_bytes} {}
  [[nodiscard]] std::uint64_t operator[](MemoryKind kind) const { return bytes_[index(kind)]; }
  [[nodiscard]] bool fits(const TierDemand& demand) const {
    return std::all_of(demand.memory.begin(), demand.memory.end(),
                       [&](const MemoryUse& use) { return use.bytes <= (*this)[use.kind]; });
  }
  void take(const TierDemand& demand) {
    for (const MemoryUse& use : demand.memory) bytes_[index(use.kind)] -= use.bytes;
  }

 private:
  static std::size_t index(MemoryKind kind) { return kind == MemoryKind::gpu ? 0 : 1; }
  std::uint64_t bytes_[2];
};

// The tiers the plan may use, the fastest first: those that decode where the step runs (the
// GPU where there is one) and, without files, those that read none.
std::vector<StorageTier> candidate_tiers(const PlacementCapacity& capacity) {
  std::vector<StorageTier> tiers;
  for (const StorageTier tier : storage_tiers()) {
    const TierDescriptor& d = tier_descriptor(tier);
    if (d.decodes == (capacity.gpu ? DecodesOn::host : DecodesOn::gpu)) continue;
    if (d.capabilities.reads_files && !capacity.files) continue;
    tiers.push_back(tier);
  }
  return tiers;
}

// "the GPU has 10 GB left, host memory 20 GB": what the faster tiers found, `kinds` in the
// order they were short.
std::string short_of(const std::vector<MemoryKind>& kinds, const MemoryLeft& left) {
  std::string text;
  for (std::size_t i = 0; i < kinds.size(); ++i)
    text += std::string(i == 0 ? "" : ", ") + holder_of(kinds[i]) + (kinds[i] == MemoryKind::gpu ? " has " : " ") +
            gb(left[kinds[i]]) + (kinds[i] == MemoryKind::gpu ? " left" : "");
  return text;
}

// Why a table went to `tier`: what the faster tiers were short of, then that it fits (or,
// a tier that reads files, that it is read from them).
std::string why_placed(StorageTier tier, const TierDemand& demand, const std::vector<MemoryKind>& short_kinds,
                       const MemoryLeft& left) {
  std::string why = short_kinds.empty() ? "" : short_of(short_kinds, left) + "; ";
  if (tier_descriptor(tier).capabilities.reads_files) return why + "read from the checkpoint's files";
  std::vector<std::string> room;
  for (const MemoryUse& use : demand.memory)
    room.push_back(std::string(holder_of(use.kind)) + "'s " + gb(left[use.kind]) + " left");
  return why + "fits " + or_list(room, " and ");
}

// "it takes 40 GB of GPU memory (10 GB left) or of host memory (30 GB left), or 12.1 GB of
// host memory on the disk tier": a table's demand on each tier the plan may use.
std::string takes(const TableDemand& t, std::span<const StorageTier> tiers, const MemoryLeft& left) {
  std::string text = "it takes ";
  bool first = true;
  std::uint64_t said = 0;
  for (const StorageTier tier : tiers) {
    const TierDemand* demand = t.on(tier);
    if (demand == nullptr) continue;
    const bool reads_files = tier_descriptor(tier).capabilities.reads_files;
    for (const MemoryUse& use : demand->memory) {
      text += first ? "" : reads_files ? ", or " : " or ";
      text +=
          (!first && use.bytes == said ? "" : gb(use.bytes) + " ") + "of " + to_string(use.kind) +
          (reads_files ? std::string(" on the ") + to_string(tier) + " tier" : " (" + gb(left[use.kind]) + " left)");
      said = use.bytes;
      first = false;
    }
  }
  return text;
}

// "; a synthetic checkpoint has no files for the disk tier" where the plan left such tiers out.
std::string without_files(const PlacementCapacity& capacity) {
  if (capacity.files) return "";
  std::vector<std::string> names;
  for (const StorageTier tier : storage_tiers())
    if (tier_descriptor(tier).capabilities.reads_files) names.emplace_back(to_string(tier));
  if (names.empty()) return "";
  return "; a synthetic checkpoint has no files for the " + or_list(names) + (names.size() == 1 ? " tier" : " tiers");
}

// Bytes the table keeps on the fastest tier it may go to: its heat's measure.
std::uint64_t fastest_bytes(const TableDemand& t) {
  for (const StorageTier tier : storage_tiers())
    if (const TierDemand* demand = t.on(tier)) return demand->bytes();
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

std::uint64_t TierDemand::bytes() const {
  std::uint64_t sum = 0;
  for (const MemoryUse& use : memory) sum += use.bytes;
  return sum;
}

const TierDemand* TableDemand::on(StorageTier tier) const {
  for (const TierDemand& demand : tiers)
    if (demand.tier == tier) return &demand;
  return nullptr;
}

std::uint64_t TableDemand::bytes_on(StorageTier tier) const {
  const TierDemand* demand = on(tier);
  return demand == nullptr ? 0 : demand->bytes();
}

std::vector<std::string> PlacementPlan::lines(std::span<const TableDemand> tables) const {
  std::vector<std::string> out;
  for (int d = 0; d < placement.tables(); ++d) {
    const StorageTier tier = placement.tier(d);
    out.push_back("table " + std::to_string(d) + ": " + to_string(tier) + ", " +
                  gb(tables[static_cast<std::size_t>(d)].bytes_on(tier)) + " (" + why[static_cast<std::size_t>(d)] +
                  ")");
  }
  return out;
}

PlacementPlan plan_placement(std::span<const TableDemand> tables, const PlacementCapacity& capacity) {
  const std::size_t n = tables.size();
  PlacementPlan plan;
  plan.placement.tiers.assign(n, StorageTier::host);
  plan.why.assign(n, "");
  // The earliest read first; at one layer, the hottest first: most lookups per byte kept.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto heat = [&](std::size_t d) {
    return tables[d].lookups / static_cast<double>(std::max<std::uint64_t>(1, fastest_bytes(tables[d])));
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (tables[a].read_at_layer != tables[b].read_at_layer) return tables[a].read_at_layer < tables[b].read_at_layer;
    return heat(a) > heat(b);
  });
  const std::vector<StorageTier> tiers = candidate_tiers(capacity);
  MemoryLeft left(capacity);
  bool cacheable = false;
  for (std::size_t rank = 0; rank < n; ++rank) {
    const std::size_t d = order[rank];
    const TableDemand& t = tables[d];
    std::vector<MemoryKind> short_kinds;  // of the faster tiers, in the order they were tried
    bool placed = false;
    for (const StorageTier tier : tiers) {
      const TierDemand* demand = t.on(tier);
      if (demand == nullptr) continue;
      if (left.fits(*demand)) {
        plan.placement.tiers[d] = tier;
        plan.why[d] = why_placed(tier, *demand, short_kinds, left) + place_in_order(tables, order, rank);
        left.take(*demand);
        cacheable = cacheable || capabilities_of(tier).cacheable;
        placed = true;
        break;
      }
      for (const MemoryUse& use : demand->memory)
        if (std::find(short_kinds.begin(), short_kinds.end(), use.kind) == short_kinds.end())
          short_kinds.push_back(use.kind);
    }
    if (!placed)
      throw InputError(option_is(Option::placement, "auto") + ": table " + std::to_string(d) +
                       " fits nowhere: " + takes(t, tiers, left) + without_files(capacity) +
                       " (use more ranks, or a larger " + option_name(Option::gpu_memory_limit) + ")");
  }
  plan.device_left = left[MemoryKind::gpu];
  plan.host_left = left[MemoryKind::host];
  if (cacheable) plan.cache_bytes = plan.device_left;
  check_placement(plan.placement);
  return plan;
}

}  // namespace pleshard
