#include "kernels/host/row_plan_host.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "kernels/common/row_pack.hpp"
#include "kernels/common/row_plan.hpp"

namespace pleshard::kernels {

namespace {

// (id, lookup) pairs in ascending id order, lookups ascending among equal ids: an LSD radix
// sort of 11-bit digits over the bits of id - first < span, a few passes over the pairs
// instead of n log n comparisons.
void sort_by_id(std::vector<std::pair<std::int64_t, std::uint32_t>>& pairs,
                std::vector<std::pair<std::int64_t, std::uint32_t>>& scratch, std::int64_t span, std::int64_t first) {
  constexpr int k_digit_bits = 11;
  constexpr std::size_t k_buckets = std::size_t{1} << k_digit_bits;
  int bits = 0;
  while (bits < 63 && (std::int64_t{1} << bits) < span) ++bits;
  scratch.resize(pairs.size());
  std::vector<std::size_t> counts(k_buckets);
  for (int shift = 0; shift < bits; shift += k_digit_bits) {
    const auto digit = [&](const std::pair<std::int64_t, std::uint32_t>& p) {
      return static_cast<std::size_t>(static_cast<std::uint64_t>(p.first - first) >> shift) & (k_buckets - 1);
    };
    std::fill(counts.begin(), counts.end(), 0);
    for (const auto& p : pairs) ++counts[digit(p)];
    std::size_t at = 0;
    for (auto& c : counts) at += std::exchange(c, at);
    for (const auto& p : pairs) scratch[counts[digit(p)]++] = p;  // stable
    pairs.swap(scratch);
  }
}

}  // namespace

void plan_rows(std::span<const std::int64_t> ids, std::span<const std::int64_t> bounds, HostRowPlan& out) {
  if (bounds.size() < 2) throw SystemError("plan_rows: no owner");
  if (ids.size() > 0xFFFFFFFFull) throw SystemError("plan_rows: more than 2^32 ids");
  out.keys.assign(ids.size(), -1);
  out.order.clear();
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= bounds.front() && ids[i] < bounds.back())
      out.order.emplace_back(ids[i], static_cast<std::uint32_t>(i));
  sort_by_id(out.order, out.scratch, bounds.back() - bounds.front(), bounds.front());

  out.distinct.clear();
  for (const auto& [id, lookup] : out.order) {
    if (out.distinct.empty() || out.distinct.back() != id) out.distinct.push_back(id);
    out.keys[lookup] = out.count() - 1;
  }
  out.owners.resize(bounds.size());
  for (std::size_t o = 0; o < bounds.size(); ++o)
    out.owners[o] = o + 1 == bounds.size() ? out.count() : lower_bound_of(out.distinct.data(), out.count(), bounds[o]);
}

void write_local_ids_in_slots(const HostRowPlan& plan, std::span<const std::int64_t> bounds, int width,
                              std::int64_t slots, std::uint8_t* out) {
  const std::size_t owners = bounds.size() - 1;
  std::fill_n(out, owners * static_cast<std::size_t>(slots) * static_cast<std::size_t>(width), std::uint8_t{0});
  for (std::int64_t j = 0; j < plan.count(); ++j) {
    const std::int64_t slot = slot_of(plan.owners.data(), static_cast<int>(owners), j, slots);
    const auto o = static_cast<std::size_t>(slot / slots);
    narrow_local_id(out, width, slot,
                    static_cast<std::uint64_t>(plan.distinct[static_cast<std::size_t>(j)] - bounds[o] + 1));
  }
}

void keys_in_slots(const HostRowPlan& plan, std::int64_t slots, std::int64_t* out) {
  const auto owners = static_cast<int>(plan.owners.size()) - 1;
  for (std::size_t i = 0; i < plan.keys.size(); ++i)
    out[i] = plan.keys[i] < 0 ? -1 : slot_of(plan.owners.data(), owners, plan.keys[i], slots);
}

void write_local_ids(const HostRowPlan& plan, std::span<const std::int64_t> bounds, int width, std::uint8_t* out) {
  for (std::size_t o = 0; o + 1 < bounds.size(); ++o)
    for (std::int64_t j = plan.owners[o]; j < plan.owners[o + 1]; ++j)
      narrow_local_id(out, width, j,
                      static_cast<std::uint64_t>(plan.distinct[static_cast<std::size_t>(j)] - bounds[o]));
}

}  // namespace pleshard::kernels
