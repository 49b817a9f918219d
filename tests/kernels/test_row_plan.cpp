// The row plan against an obviously right reference on many random steps, made on the host
// and (where there is a GPU) on the device: distinct ids ascending inside the owners'
// bounds, each lookup's key among them (-1 outside), where each owner's ids start and the
// count; repeated, unsorted and out-of-bounds ids, empty owners, empty steps, a plan reused
// across steps of other sizes and other owners. And a step's plans of every layer as the
// stores and strategies use them (exec/step_row_plans.hpp), in the host space and a GPU's:
// the owners' counts, the keys and the distinct ids brought to the host.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>

#include "core/error.hpp"
#include "exec/step_row_plans.hpp"
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

// Every layer's plan of a step in the space, as the disk tier and the owner exchange read it:
// one object's plans over many steps of other sizes, made in the space or on the host in
// turn, their distinct ids brought to the host before or after the owners' counts.
TEST(RowPlan, StepPlansInEverySpaceMatchTheReference) {
  std::vector<std::unique_ptr<StepSpace>> spaces;
  spaces.push_back(make_host_space());
#if PLESHARD_HAVE_CUDA
  if (kernels::cuda_device_count() > 0) spaces.push_back(make_cuda_space());
#endif
  std::mt19937_64 rng(13);
  for (const auto& space : spaces) {
    SCOPED_TRACE(space->on_device() ? "gpu" : "host");
    for (int object = 0; object < 6; ++object) {
      // Layers of one step share the owners' count, not their bounds.
      std::vector<std::vector<std::int64_t>> bounds{random_step(rng, object).bounds};
      for (int d = 1; d < 3; ++d) {
        std::vector<std::int64_t> b{static_cast<std::int64_t>(rng() % 1000)};
        while (b.size() < bounds[0].size()) b.push_back(b.back() + static_cast<std::int64_t>(rng() % 500));
        bounds.push_back(b);
      }
      StepRowPlans plans(*space, bounds, 3000);
      EXPECT_EQ(plans.plans_on_gpu(), space->on_device());
      for (int round = 0; round < 8; ++round) {
        const bool on_host = round % 3 == 2;  // a step too large for the GPU's plans
        std::vector<Step> steps;
        std::vector<SpaceBuffer> ids;
        for (std::size_t d = 0; d < bounds.size(); ++d) {
          // Random ids against this layer's bounds: a random step's, moved and clipped there.
          Step s = random_step(rng, round * 3 + static_cast<int>(d));
          s.bounds = bounds[d];
          const std::int64_t span = bounds[d].back() - bounds[d].front() + 10;
          for (auto& id : s.ids) id = bounds[d].front() - 5 + (id % span + span) % span;
          steps.push_back(s);
          ids.emplace_back(*space);
          ids.back().assign(std::span<const std::int64_t>(s.ids));
          if (on_host) {
            plans.plan_on_host(static_cast<int>(d), s.ids);
          } else {
            plans.plan_in_space(static_cast<int>(d), ids.back().as<std::int64_t>(),
                                static_cast<std::int64_t>(s.ids.size()));
          }
        }
        EXPECT_EQ(plans.on_host(), on_host || !space->on_device());
        std::vector<std::vector<std::int64_t>> distinct;
        if (round % 2 == 0) plans.distinct_on_host(distinct);
        const std::vector<std::vector<std::int64_t>> counts = plans.owner_counts();
        if (round % 2 == 1) plans.distinct_on_host(distinct);
        for (std::size_t d = 0; d < steps.size(); ++d) {
          SCOPED_TRACE("object " + std::to_string(object) + " round " + std::to_string(round) + " layer " +
                       std::to_string(d));
          const Expected e = reference(steps[d]);
          std::vector<std::int64_t> expected_counts;
          for (std::size_t o = 0; o + 1 < e.owners.size(); ++o)
            expected_counts.push_back(e.owners[o + 1] - e.owners[o]);
          ASSERT_EQ(counts[d], expected_counts);
          ASSERT_EQ(distinct[d], e.distinct);
          std::vector<std::int64_t> keys(e.keys.size());
          const std::int64_t* planned = plans.keys(static_cast<int>(d));
          if (plans.on_host()) {
            std::copy(planned, planned + keys.size(), keys.begin());
          } else if (!keys.empty()) {
            space->copy_to_host(keys.data(), planned, keys.size() * sizeof(std::int64_t));
          }
          ASSERT_EQ(keys, e.keys);
        }
      }
    }
  }
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
