// The owner exchange's planning against an obviously right reference on many random
// cases: distinct ids in ascending order, counted per owner, sent as owner-local indexes,
// and every id keyed to its distinct row (-1 outside the table); repeated, unsorted and
// out-of-table ids, empty owners and empty steps. (The row plan under it is held to its
// reference on host and GPU in tests/kernels/test_row_plan.cpp.)

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "engine/owner_requests.hpp"
#include "kernels/common/row_pack.hpp"
#include "store/row_range.hpp"

namespace {

using namespace pleshard;

TEST(OwnerRequests, MatchTheReference) {
  std::mt19937_64 rng(11);
  OwnerRequests got;  // reused: every plan overwrites the last
  for (int round = 0; round < 400; ++round) {
    const int owners = 1 + static_cast<int>(rng() % 9);
    const std::int64_t rows = 1 + static_cast<std::int64_t>(rng() % (round % 3 == 0 ? 20 : 100000));
    std::vector<std::int64_t> bounds;
    std::int64_t widest = 0;
    for (int o = 0; o < owners; ++o) {
      const RowRange r = balanced_range(rows, owners, o);
      bounds.push_back(r.begin);
      widest = std::max(widest, r.size());
    }
    bounds.push_back(rows);
    const int width = kernels::local_id_bytes(widest);
    std::vector<std::int64_t> ids(rng() % 300);
    for (auto& id : ids) {
      const auto pick = rng() % 10;
      id = pick == 0                  ? -1 - static_cast<std::int64_t>(rng() % 5)
           : pick == 1                ? rows + static_cast<std::int64_t>(rng() % 5)
           : pick < 5 && !ids.empty() ? ids[rng() % ids.size()]  // a repeat (or an unset slot: 0)
                                      : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows));
    }
    plan_owner_requests(ids, bounds, width, got);

    std::set<std::int64_t> in_table;
    for (const std::int64_t id : ids)
      if (id >= 0 && id < rows) in_table.insert(id);
    const std::vector<std::int64_t> distinct(in_table.begin(), in_table.end());
    std::map<std::int64_t, std::int64_t> position;
    for (std::size_t j = 0; j < distinct.size(); ++j) position[distinct[j]] = static_cast<std::int64_t>(j);
    ASSERT_EQ(got.rows.count(), static_cast<std::int64_t>(distinct.size()));
    std::vector<std::int64_t> per_owner(static_cast<std::size_t>(owners), 0);
    for (std::size_t j = 0; j < distinct.size(); ++j) {
      const auto o =
          static_cast<std::size_t>(std::upper_bound(bounds.begin(), bounds.end(), distinct[j]) - bounds.begin() - 1);
      ++per_owner[o];
      EXPECT_EQ(kernels::widen_local_id(got.local_ids.data(), width, static_cast<std::int64_t>(j), bounds[o]),
                distinct[j]);
    }
    for (std::size_t o = 0; o < per_owner.size(); ++o) EXPECT_EQ(got.rows.of_owner(o), per_owner[o]) << "owner " << o;
    EXPECT_EQ(got.local_ids.size(), distinct.size() * static_cast<std::size_t>(width));
    ASSERT_EQ(got.rows.keys.size(), ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i)
      EXPECT_EQ(got.rows.keys[i], position.count(ids[i]) ? position[ids[i]] : -1) << "id " << ids[i];
  }
}

}  // namespace

namespace {

TEST(OwnerRequests, LocalIdsTakeTheNarrowestWidthAndWidenBack) {
  std::mt19937_64 rng(27);
  for (const std::int64_t rows : {std::int64_t{1000}, std::int64_t{1} << 16, (std::int64_t{1} << 16) + 1,
                                  std::int64_t{1} << 32, (std::int64_t{1} << 32) + 1, std::int64_t{1} << 40}) {
    // The narrowest width that holds the largest local index, rows - 1.
    const int width = kernels::local_id_bytes(rows);
    const auto largest = static_cast<std::uint64_t>(rows - 1);
    if (width < 8) {
      EXPECT_LT(largest, std::uint64_t{1} << (8 * width)) << rows;
    }
    if (width > 2) {
      EXPECT_GE(largest, std::uint64_t{1} << (4 * width)) << rows;
    }
    const auto first = static_cast<std::int64_t>(rng() % (std::uint64_t{1} << 40));
    std::vector<std::uint8_t> narrow(513 * static_cast<std::size_t>(width));
    std::vector<std::int64_t> ids(513);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::uint64_t local = i == 0   ? 0
                                  : i == 1 ? static_cast<std::uint64_t>(rows - 1)
                                           : rng() % static_cast<std::uint64_t>(rows);
      ids[i] = first + static_cast<std::int64_t>(local);
      kernels::narrow_local_id(narrow.data(), width, static_cast<std::int64_t>(i), local);
    }
    for (std::size_t i = 0; i < ids.size(); ++i)
      ASSERT_EQ(kernels::widen_local_id(narrow.data(), width, static_cast<std::int64_t>(i), first), ids[i]) << rows;
  }
}

}  // namespace
