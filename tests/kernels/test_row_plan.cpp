// The row plan against an obviously right reference on many random steps, made on the host
// and (where there is a GPU) on the device: distinct ids ascending inside the owners'
// bounds, each lookup's key among them (-1 outside), where each owner's ids start and the
// count; repeated, unsorted and out-of-bounds ids, empty owners, empty steps, a plan reused
// across steps of other sizes and other owners.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "core/error.hpp"
#include "kernels/host/row_plan_host.hpp"
#include "store/row_range.hpp"
#if PLESHARD_HAVE_CUDA
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/row_plan_cuda.hpp"
#endif

namespace {

using namespace pleshard;

struct Step {
  std::vector<std::int64_t> bounds;
  std::vector<std::int64_t> ids;
};

struct Expected {
  std::vector<std::int64_t> distinct, keys, owners;
};

Step random_step(std::mt19937_64& rng, int round) {
  Step s;
  const int owners = 1 + static_cast<int>(rng() % 9);
  const std::int64_t rows = 1 + static_cast<std::int64_t>(rng() % (round % 3 == 0 ? 20 : 100000));
  const auto first = static_cast<std::int64_t>(rng() % 1000);  // a rank's range need not start at row 0
  for (int o = 0; o < owners; ++o) s.bounds.push_back(first + balanced_range(rows, owners, o).begin);
  s.bounds.push_back(first + rows);
  s.ids.resize(round % 17 == 0 ? 0 : rng() % 3000);
  for (auto& id : s.ids) {
    const auto pick = rng() % 10;
    id = pick == 0                    ? first - 1 - static_cast<std::int64_t>(rng() % 5)
         : pick == 1                  ? first + rows + static_cast<std::int64_t>(rng() % 5)
         : pick < 5 && !s.ids.empty() ? s.ids[rng() % s.ids.size()]  // a repeat (or an unset slot: 0)
                                      : first + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows));
  }
  return s;
}

Expected reference(const Step& s) {
  Expected e;
  std::set<std::int64_t> inside;
  for (const std::int64_t id : s.ids)
    if (id >= s.bounds.front() && id < s.bounds.back()) inside.insert(id);
  e.distinct.assign(inside.begin(), inside.end());
  std::map<std::int64_t, std::int64_t> position;
  for (std::size_t j = 0; j < e.distinct.size(); ++j) position[e.distinct[j]] = static_cast<std::int64_t>(j);
  for (const std::int64_t id : s.ids) e.keys.push_back(position.count(id) ? position[id] : -1);
  // Owner o's ids start after every distinct id of the owners before it.
  for (std::size_t o = 0; o + 1 < s.bounds.size(); ++o)
    e.owners.push_back(
        std::count_if(e.distinct.begin(), e.distinct.end(), [&](std::int64_t id) { return id < s.bounds[o]; }));
  e.owners.push_back(static_cast<std::int64_t>(e.distinct.size()));
  return e;
}

TEST(RowPlan, HostPlanMatchesTheReference) {
  std::mt19937_64 rng(11);
  kernels::HostRowPlan got;  // reused: every plan overwrites the last
  for (int round = 0; round < 400; ++round) {
    const Step s = random_step(rng, round);
    kernels::plan_rows(s.ids, s.bounds, got);
    const Expected e = reference(s);
    ASSERT_EQ(got.distinct, e.distinct) << "round " << round;
    ASSERT_EQ(got.keys, e.keys) << "round " << round;
    ASSERT_EQ(got.owners, e.owners) << "round " << round;
    ASSERT_EQ(got.count(), static_cast<std::int64_t>(e.distinct.size()));
  }
}

TEST(RowPlan, HostPlanRefusesNoOwner) {
  kernels::HostRowPlan got;
  const std::int64_t one[1] = {0};
  const std::int64_t ids[1] = {0};
  EXPECT_THROW(kernels::plan_rows(ids, one, got), SystemError);
}

#if PLESHARD_HAVE_CUDA
TEST(RowPlan, DevicePlanMatchesTheReference) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 rng(12);
  kernels::DeviceRowPlan plan;  // reused across sizes and owners, as a store reuses it
  kernels::DeviceBuffer<std::int64_t> ids(3000);
  for (int round = 0; round < 300; ++round) {
    const Step s = random_step(rng, round);
    plan.reserve(s.bounds, round % 2 == 0 ? 3000 : static_cast<std::int64_t>(s.ids.size()));
    ids.copy_from_host(std::span<const std::int64_t>(s.ids));
    plan.plan(ids.data(), static_cast<std::int64_t>(s.ids.size()), nullptr);
    const Expected e = reference(s);
    std::vector<std::int64_t> owners(s.bounds.size());
    PLESHARD_CUDA_CHECK(
        cudaMemcpy(owners.data(), plan.owners(), owners.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
    ASSERT_EQ(owners, e.owners) << "round " << round;
    std::vector<std::uint32_t> offsets(e.distinct.size());
    std::vector<std::int64_t> keys(s.ids.size());
    if (!offsets.empty())
      PLESHARD_CUDA_CHECK(
          cudaMemcpy(offsets.data(), plan.distinct(), offsets.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    if (!keys.empty())
      PLESHARD_CUDA_CHECK(
          cudaMemcpy(keys.data(), plan.keys(), keys.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost));
    std::vector<std::int64_t> distinct;
    for (const std::uint32_t offset : offsets) distinct.push_back(plan.first() + offset);
    ASSERT_EQ(distinct, e.distinct) << "round " << round;
    ASSERT_EQ(keys, e.keys) << "round " << round;
  }
}

TEST(RowPlan, DevicePlanRefusesWhatItCannotKey) {
  if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  kernels::DeviceRowPlan plan;
  const std::int64_t too_wide[2] = {0, kernels::k_max_distinct_rows};
  EXPECT_THROW(plan.reserve(too_wide, 10), SystemError);
  const std::int64_t descending[3] = {0, 10, 5};
  EXPECT_THROW(plan.reserve(descending, 10), SystemError);
  const std::int64_t bounds[2] = {0, 10};
  plan.reserve(bounds, 10);
  kernels::DeviceBuffer<std::int64_t> ids(11);
  EXPECT_THROW(plan.plan(ids.data(), 11, nullptr), SystemError);
}
#endif

}  // namespace
