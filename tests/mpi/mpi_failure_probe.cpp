// Registered with WILL_FAIL: passes on every rank but the last, so ctest passes only if
// the test main reports one rank's failure as the whole run's failure.

#include <gtest/gtest.h>
#include <mpi.h>

namespace {

TEST(MpiFailureProbe, FailsOnTheLastRankOnly) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ASSERT_GT(size, 1) << "needs at least two ranks to mean anything";
  EXPECT_NE(rank, size - 1) << "planted failure on the last rank";
}

}  // namespace
