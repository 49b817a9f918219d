#include "engine/owner_requests.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "kernels/common/row_pack.hpp"

namespace pleshard {

namespace {

// (id, position) pairs in ascending id order, positions ascending among equal ids (the
// order std::sort gives them): an LSD radix sort of 11-bit digits over the bits of
// id - first < span, a few passes over the pairs instead of n log n comparisons.
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

void plan_owner_requests(std::span<const std::int64_t> ids, std::span<const std::int64_t> bounds, int width,
                         OwnerRequests& out) {
  if (bounds.size() < 2) throw SystemError("plan_owner_requests: no owner");
  if (ids.size() > 0xFFFFFFFFull) throw SystemError("plan_owner_requests: more than 2^32 ids");
  const std::size_t owners = bounds.size() - 1;
  out.per_owner.assign(owners, 0);
  out.keys.assign(ids.size(), -1);
  out.order.clear();
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= bounds.front() && ids[i] < bounds.back())
      out.order.emplace_back(ids[i], static_cast<std::uint32_t>(i));
  sort_by_id(out.order, out.scratch, bounds.back() - bounds.front(), bounds.front());

  out.local_ids.resize(out.order.size() * static_cast<std::size_t>(width));
  std::int64_t distinct = -1;
  std::size_t owner = 0;
  for (std::size_t j = 0; j < out.order.size(); ++j) {
    const std::int64_t id = out.order[j].first;
    if (j == 0 || id != out.order[j - 1].first) {
      ++distinct;
      while (id >= bounds[owner + 1]) ++owner;
      ++out.per_owner[owner];
      kernels::narrow_local_id(out.local_ids.data(), width, distinct, static_cast<std::uint64_t>(id - bounds[owner]));
    }
    out.keys[out.order[j].second] = distinct;
  }
  out.distinct = distinct + 1;
  out.local_ids.resize(static_cast<std::size_t>(out.distinct) * static_cast<std::size_t>(width));
}

}  // namespace pleshard
