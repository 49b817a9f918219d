// The test main's plumbing on 1..4 ranks: MPI is initialized, ranks agree on failures.

#include <gtest/gtest.h>
#include <mpi.h>

#include "core/collective.hpp"

namespace {

TEST(MpiMain, EveryRankRunsTheTests) {
  int size = 0;
  ASSERT_EQ(MPI_Comm_size(MPI_COMM_WORLD, &size), MPI_SUCCESS);
  int ones = 1;
  int total = 0;
  ASSERT_EQ(MPI_Allreduce(&ones, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(total, size);
}

TEST(CollectiveTry, EveryRankThrowsTheFirstFailingRanksMessage) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int failing = size - 1;  // the last rank, and the higher ranks' messages lose
  try {
    pleshard::collective_try(MPI_COMM_WORLD, [&] {
      if (rank >= failing) throw pleshard::InputError("bad input on rank " + std::to_string(rank));
    });
    FAIL() << "no AgreedError";
  } catch (const pleshard::AgreedError& e) {
    EXPECT_EQ(e.failing_rank(), failing);
    EXPECT_EQ(std::string(e.what()), "bad input on rank " + std::to_string(failing));
  }
}

TEST(CollectiveTry, ReturnsTheValueWhenNoRankFails) {
  const int value = pleshard::collective_try(MPI_COMM_WORLD, [] { return 7; });
  EXPECT_EQ(value, 7);
}

}  // namespace
