// The stall limit of the engines alive in one process: the shortest holds, whatever order
// they end in, and with none alive waits are unwatched; a command's limit holds beside them.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "core/watched_wait.hpp"

namespace {

using namespace pleshard;

TEST(StallLimit, TheShortestOfTheScopesAliveHolds) {
  EXPECT_TRUE(std::isinf(stall_limit()));
  auto a = std::make_unique<StallLimitScope>(1.0);
  auto b = std::make_unique<StallLimitScope>(600.0);
  EXPECT_EQ(stall_limit(), 1.0);
  a.reset();  // the first made ends first: the other's limit, not the one before it
  EXPECT_EQ(stall_limit(), 600.0);
  auto c = std::make_unique<StallLimitScope>(2.0);
  EXPECT_EQ(stall_limit(), 2.0);
  auto d = std::make_unique<StallLimitScope>(2.0);  // equal limits are counted apart
  c.reset();
  EXPECT_EQ(stall_limit(), 2.0);
  d.reset();
  EXPECT_EQ(stall_limit(), 600.0);
  b.reset();
  EXPECT_TRUE(std::isinf(stall_limit()));
}

TEST(StallLimit, TheCommandsLimitHoldsBesideTheScopes) {
  set_stall_limit(5.0);
  EXPECT_EQ(stall_limit(), 5.0);
  {
    const StallLimitScope longer(600.0);
    EXPECT_EQ(stall_limit(), 5.0);
    const StallLimitScope shorter(2.0);
    EXPECT_EQ(stall_limit(), 2.0);
  }
  EXPECT_EQ(stall_limit(), 5.0);  // the scopes gone, the command's still holds
  set_stall_limit(std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isinf(stall_limit()));
}

}  // namespace
