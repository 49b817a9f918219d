// The fault plan: none unless asked for; read from the environment once, whole numbers only.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/fault_plan.hpp"

namespace {

using namespace pleshard;

class FaultPlanEnvironment : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* v :
         {"PLESHARD_FAULT_STALL_STEP", "PLESHARD_FAULT_STALL_RANK", "PLESHARD_FAULT_KILL_AFTER_PARTS",
          "PLESHARD_FAULT_WRITE_LIMIT", "PLESHARD_FAULT_KILL_IN_SHARED_LOAD", "PLESHARD_FAULT_DISK_READ_FAILURE",
          "PLESHARD_FAULT_DISK_READ_FAILURE_RANK", "PLESHARD_FAULT_SMALL_PAGES", "PLESHARD_FAULT_STOP_AT",
          "PLESHARD_FAULT_STOP_RANK", "PLESHARD_FAULT_DECODE_DELAY_US", "PLESHARD_FAULT_AHEAD_REFUSED",
          "PLESHARD_FAULT_AHEAD_REFUSED_RANK"})
      ::unsetenv(v);
    set_fault_plan({});
  }
};

TEST_F(FaultPlanEnvironment, NoneByDefault) {
  const FaultPlan plan = fault_plan_from_environment(0);
  EXPECT_FALSE(plan.stall_step.has_value());
  EXPECT_EQ(plan.stall_rank, 0);
  EXPECT_FALSE(plan.kill_after_parts.has_value());
  EXPECT_FALSE(plan.write_limit.has_value());
  EXPECT_FALSE(plan.kill_in_shared_load);
  EXPECT_FALSE(plan.disk_read_failure.has_value());
  EXPECT_FALSE(plan.small_pages);
  EXPECT_FALSE(plan.stop_at.has_value());
  EXPECT_EQ(plan.decode_delay_us, 0u);
  EXPECT_FALSE(plan.ahead_refused);
  EXPECT_FALSE(fault_plan().write_limit.has_value());
}

TEST_F(FaultPlanEnvironment, EachVariableSetsItsFault) {
  ::setenv("PLESHARD_FAULT_STALL_STEP", "3", 1);
  ::setenv("PLESHARD_FAULT_STALL_RANK", "2", 1);
  ::setenv("PLESHARD_FAULT_KILL_AFTER_PARTS", "5", 1);
  ::setenv("PLESHARD_FAULT_WRITE_LIMIT", "4096", 1);
  ::setenv("PLESHARD_FAULT_KILL_IN_SHARED_LOAD", "1", 1);
  ::setenv("PLESHARD_FAULT_SMALL_PAGES", "1", 1);
  ::setenv("PLESHARD_FAULT_DECODE_DELAY_US", "2500", 1);
  set_fault_plan(fault_plan_from_environment(0));
  EXPECT_EQ(fault_plan().stall_step, 3u);
  EXPECT_EQ(fault_plan().stall_rank, 2);
  EXPECT_EQ(fault_plan().kill_after_parts, 5u);
  EXPECT_EQ(fault_plan().write_limit, 4096u);
  EXPECT_TRUE(fault_plan().kill_in_shared_load);
  EXPECT_TRUE(fault_plan().small_pages);
  EXPECT_EQ(fault_plan().decode_delay_us, 2500u);
}

TEST_F(FaultPlanEnvironment, ADiskReadFailureIsItsRanksAlone) {
  ::setenv("PLESHARD_FAULT_DISK_READ_FAILURE", "4", 1);
  EXPECT_EQ(fault_plan_from_environment(0).disk_read_failure, 4u);  // rank 0 by default
  EXPECT_FALSE(fault_plan_from_environment(1).disk_read_failure.has_value());
  ::setenv("PLESHARD_FAULT_DISK_READ_FAILURE_RANK", "1", 1);
  EXPECT_FALSE(fault_plan_from_environment(0).disk_read_failure.has_value());
  EXPECT_EQ(fault_plan_from_environment(1).disk_read_failure, 4u);
}

TEST_F(FaultPlanEnvironment, ARefusedFetchAheadIsItsRanksAlone) {
  ::setenv("PLESHARD_FAULT_AHEAD_REFUSED", "1", 1);
  ::setenv("PLESHARD_FAULT_AHEAD_REFUSED_RANK", "2", 1);
  for (const int rank : {0, 1, 3}) EXPECT_FALSE(fault_plan_from_environment(rank).ahead_refused) << rank;
  EXPECT_TRUE(fault_plan_from_environment(2).ahead_refused);
}

TEST_F(FaultPlanEnvironment, AStopIsItsRanksAloneAtThePointNamed) {
  ::setenv("PLESHARD_FAULT_STOP_AT", "load", 1);
  EXPECT_EQ(fault_plan_from_environment(0).stop_at, FaultPoint::load);  // rank 0 by default
  ::setenv("PLESHARD_FAULT_STOP_RANK", "1", 1);
  EXPECT_FALSE(fault_plan_from_environment(0).stop_at.has_value());
  for (const auto& [name, point] : {std::pair{"start", FaultPoint::start}, std::pair{"load", FaultPoint::load},
                                    std::pair{"output", FaultPoint::output}, std::pair{"end", FaultPoint::end}}) {
    ::setenv("PLESHARD_FAULT_STOP_AT", name, 1);
    EXPECT_EQ(fault_plan_from_environment(1).stop_at, point) << name;
  }
}

TEST_F(FaultPlanEnvironment, AStopAtNoPointIsNamed) {
  ::setenv("PLESHARD_FAULT_STOP_AT", "steps", 1);
  try {
    (void)fault_plan_from_environment(0);
    ADD_FAILURE() << "steps was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "PLESHARD_FAULT_STOP_AT=steps: not a point of the job (start, load, output or end)");
  }
}

TEST_F(FaultPlanEnvironment, AValueNotAWholeNumberIsNamed) {
  for (const char* bad : {"-1", "12x", "1e3", " 7"}) {
    ::setenv("PLESHARD_FAULT_WRITE_LIMIT", bad, 1);
    try {
      (void)fault_plan_from_environment(0);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("PLESHARD_FAULT_WRITE_LIMIT=") + bad + ": not a whole number");
    }
  }
}

}  // namespace
