#include "store/placement.hpp"

#include <algorithm>
#include <charconv>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/option_names.hpp"
#include "store/tier_descriptor.hpp"

namespace pleshard {

bool Placement::uniform() const {
  return std::adjacent_find(tiers.begin(), tiers.end(), std::not_equal_to<>()) == tiers.end();
}

bool Placement::uses(StorageTier tier) const { return std::find(tiers.begin(), tiers.end(), tier) != tiers.end(); }

bool Placement::decodes_on(DecodesOn where) const {
  return std::any_of(tiers.begin(), tiers.end(),
                     [&](StorageTier tier) { return tier_descriptor(tier).decodes == where; });
}

bool Placement::uses_gpu() const {
  if (decodes_on(DecodesOn::gpu)) return true;
  return !decodes_on(DecodesOn::host) && std::all_of(tiers.begin(), tiers.end(), tier_uses_gpu);
}

TierCapabilities Placement::capabilities() const {
  TierCapabilities all{true, true, false, false, true, false};
  for (const StorageTier tier : tiers) {
    const TierCapabilities c = capabilities_of(tier);
    all.whole_tables = all.whole_tables && c.whole_tables;
    all.graph_capturable = all.graph_capturable && c.graph_capturable;
    all.cacheable = all.cacheable || c.cacheable;
    all.reads_files = all.reads_files || c.reads_files;
    all.loads_collectively = all.loads_collectively && c.loads_collectively;
    all.in_host_memory = all.in_host_memory || c.in_host_memory;
  }
  return all;
}

std::string Placement::describe() const {
  if (tiers.empty()) return "";
  if (uniform()) return to_string(tiers.front());
  std::string text;
  for (std::size_t d = 0; d < tiers.size(); ++d)
    text += (d == 0 ? "" : ",") + std::to_string(d) + "=" + to_string(tiers[d]);
  return text;
}

namespace {

// The placement's tiers that decode `where`, the fastest first.
std::vector<std::string> tiers_decoding(const Placement& placement, DecodesOn where) {
  std::vector<std::string> names;
  for (const StorageTier tier : storage_tiers())
    if (placement.uses(tier) && tier_descriptor(tier).decodes == where) names.emplace_back(to_string(tier));
  return names;
}

// "the host tier", "the device and pinned tiers".
std::string the_tiers(const std::vector<std::string>& names) {
  return "the " + or_list(names, " and ") + (names.size() == 1 ? " tier" : " tiers");
}

}  // namespace

void check_placement(const Placement& placement) {
  const std::vector<std::string> host = tiers_decoding(placement, DecodesOn::host);
  const std::vector<std::string> gpu = tiers_decoding(placement, DecodesOn::gpu);
  if (!host.empty() && !gpu.empty())
    throw InputError(option_is(Option::placement, placement.describe()) + ": " + the_tiers(host) +
                     (host.size() == 1 ? " decodes" : " decode") + " on the host and " + the_tiers(gpu) +
                     " on the GPU; one step decodes in one place (put the host tier's tables on pinned)");
}

std::vector<RowRange> ranges_on(const Placement& placement, StorageTier tier, std::span<const RowRange> ranges) {
  std::vector<RowRange> on(ranges.begin(), ranges.end());
  for (std::size_t d = 0; d < on.size(); ++d)
    if (placement.tier(static_cast<int>(d)) != tier) on[d] = {0, 0};
  return on;
}

Placement parse_placement(std::string_view text, int tables) {
  const std::string option = option_is(Option::placement, text);
  if (text.find('=') == std::string_view::npos)
    return Placement::every(parse_storage_tier(text, Option::placement), tables);
  Placement placement;
  std::vector<bool> named(static_cast<std::size_t>(tables), false);
  placement.tiers.resize(static_cast<std::size_t>(tables));
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view item = text.substr(at, comma - at);
    at = comma + 1;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw InputError(option + ": '" + quoted_value(item) + "' is not TABLE=TIER (say where each table lives)");
    int table = -1;
    const std::string_view index = item.substr(0, eq);
    const auto [end, error] = std::from_chars(index.data(), index.data() + index.size(), table);
    if (error != std::errc() || end != index.data() + index.size() || table < 0)
      throw InputError(option + ": '" + quoted_value(index) + "' is not a table's index (0, 1, ...)");
    if (table >= tables)
      throw InputError(option + ": table " + std::to_string(table) + " does not exist; the model has " +
                       std::to_string(tables) + (tables == 1 ? " table" : " tables") + " (0 to " +
                       std::to_string(tables - 1) + ")");
    if (named[static_cast<std::size_t>(table)])
      throw InputError(option + ": table " + std::to_string(table) + " is placed twice");
    named[static_cast<std::size_t>(table)] = true;
    placement.tiers[static_cast<std::size_t>(table)] = parse_storage_tier(
        item.substr(eq + 1), option_name(Option::placement) + ": table " + std::to_string(table) + "'s tier");
  }
  for (int d = 0; d < tables; ++d)
    if (!named[static_cast<std::size_t>(d)])
      throw InputError(option + ": table " + std::to_string(d) + " is not placed; name every table once");
  check_placement(placement);
  return placement;
}

}  // namespace pleshard
