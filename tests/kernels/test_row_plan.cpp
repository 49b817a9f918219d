// The row plan against an obviously right reference on many random steps, made on the host
// and (where there is a GPU) on the device: distinct ids ascending inside the owners'
// bounds, each lookup's key among them (-1 outside), where each owner's ids start and the
// count; repeated, unsorted and out-of-bounds ids, empty owners, empty steps, a plan reused
// across steps of other sizes and other owners. And a step's plans of every layer as the
// stores and strategies use them (exec/step_row_plans.hpp), in the host space and a GPU's:
// the owners' counts, the keys and the distinct ids brought to the host; and the same plans
// written as fixed-size messages (kernels/common/row_plan.hpp: slot_of).

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>

#include "core/error.hpp"
#include "exec/step_row_plans.hpp"
#include "kernels/common/row_pack.hpp"
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

// The host space, and a GPU's where there is one.
std::vector<std::unique_ptr<StepSpace>> every_space() {
  std::vector<std::unique_ptr<StepSpace>> spaces;
  spaces.push_back(make_host_space());
#if PLESHARD_HAVE_CUDA
  if (kernels::cuda_device_count() > 0) spaces.push_back(make_cuda_space());
#endif
  return spaces;
}

// Every layer's plan of a step in the space, as the disk tier and the owner exchange read it:
// one object's plans over many steps of other sizes, made in the space or on the host in
// turn, their distinct ids brought to the host before or after the owners' counts.
TEST(RowPlan, StepPlansInEverySpaceMatchTheReference) {
  const std::vector<std::unique_ptr<StepSpace>> spaces = every_space();
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

// Fixed-size messages, from the ids alone: owner o's block of `slots` entries holds its
// distinct ids ascending as local index plus one, then zeros; a lookup's entry is its owner's
// block and its id's rank among that owner's distinct ids.
struct ExpectedSlots {
  std::vector<std::int64_t> entries;  // widened, 0 where empty
  std::vector<std::int64_t> keys;
};
ExpectedSlots slots_reference(const Step& s, std::int64_t slots) {
  const std::size_t owners = s.bounds.size() - 1;
  std::vector<std::set<std::int64_t>> of_owner(owners);
  const auto owner_of = [&](std::int64_t id) {
    return static_cast<std::size_t>(std::upper_bound(s.bounds.begin(), s.bounds.end(), id) - s.bounds.begin() - 1);
  };
  for (const std::int64_t id : s.ids)
    if (id >= s.bounds.front() && id < s.bounds.back()) of_owner[owner_of(id)].insert(id);
  ExpectedSlots e;
  e.entries.assign(owners * static_cast<std::size_t>(slots), 0);
  for (std::size_t o = 0; o < owners; ++o) {
    std::size_t k = 0;
    for (const std::int64_t id : of_owner[o])
      e.entries[o * static_cast<std::size_t>(slots) + k++] = id - s.bounds[o] + 1;
  }
  for (const std::int64_t id : s.ids) {
    if (id < s.bounds.front() || id >= s.bounds.back()) {
      e.keys.push_back(-1);
      continue;
    }
    const std::size_t o = owner_of(id);
    const auto rank = std::distance(of_owner[o].begin(), of_owner[o].find(id));
    e.keys.push_back(static_cast<std::int64_t>(o) * slots + rank);
  }
  return e;
}

TEST(RowPlan, FixedSizeMessagesInEverySpaceMatchTheReference) {
  const std::vector<std::unique_ptr<StepSpace>> spaces = every_space();
  std::mt19937_64 rng(17);
  for (const auto& space : spaces) {
    SCOPED_TRACE(space->on_device() ? "gpu" : "host");
    for (int round = 0; round < 60; ++round) {
      const Step s = random_step(rng, round);
      StepRowPlans plans(*space, {s.bounds}, 3000);
      const bool on_host = round % 4 == 3;  // a GPU's step planned on the host
      SpaceBuffer ids(*space);
      ids.assign(std::span<const std::int64_t>(s.ids));
      if (on_host) {
        plans.plan_on_host(0, s.ids);
      } else {
        plans.plan_in_space(0, ids.as<std::int64_t>(), static_cast<std::int64_t>(s.ids.size()));
      }
      // As many entries as the lookups (what the owner exchange gives), or a few more.
      const auto slots = static_cast<std::int64_t>(s.ids.size()) + (round % 3 == 0 ? 7 : 0);
      std::int64_t widest = 0;
      for (std::size_t o = 0; o + 1 < s.bounds.size(); ++o) widest = std::max(widest, s.bounds[o + 1] - s.bounds[o]);
      const int width = kernels::local_id_bytes(widest + 1);
      const std::size_t owners = s.bounds.size() - 1;
      const std::size_t entries = owners * static_cast<std::size_t>(slots);
      SpaceBuffer sent(*space);
      SpaceBuffer keys(*space);
      sent.reserve(std::max<std::size_t>(1, entries * static_cast<std::size_t>(width)));
      keys.reserve(std::max<std::size_t>(1, s.ids.size() * sizeof(std::int64_t)));
      std::vector<std::uint8_t> sent_on_host(entries * static_cast<std::size_t>(width), 0xAB);  // not zeros
      std::vector<std::int64_t> keys_on_host(s.ids.size());
      if (plans.on_host()) {  // written where the plan was made
        plans.write_local_ids_in_slots(0, width, slots, sent_on_host.data());
        plans.keys_in_slots(0, slots, keys_on_host.data());
      } else {
        if (!sent_on_host.empty())  // not zeros: the empty entries must be written
          space->copy_from_host(sent.data(), sent_on_host.data(), sent_on_host.size());
        plans.write_local_ids_in_slots(0, width, slots, sent.data());
        plans.keys_in_slots(0, slots, keys.as<std::int64_t>());
        if (!sent_on_host.empty()) space->copy_to_host(sent_on_host.data(), sent.data(), sent_on_host.size());
        if (!keys_on_host.empty())
          space->copy_to_host(keys_on_host.data(), keys.data(), keys_on_host.size() * sizeof(std::int64_t));
      }
      const ExpectedSlots e = slots_reference(s, slots);
      std::vector<std::int64_t> got(entries);
      for (std::size_t i = 0; i < entries; ++i)
        got[i] = kernels::widen_local_id(sent_on_host.data(), width, static_cast<std::int64_t>(i), 0);
      ASSERT_EQ(got, e.entries) << "round " << round;
      ASSERT_EQ(keys_on_host, e.keys) << "round " << round;
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
