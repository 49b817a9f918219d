// Report values reduced over ranks by name: each the maximum or the sum of the ranks' values,
// whole numbers exact past 2^53, registered in any mix of kinds.

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>

#include "core/rank_reduction.hpp"

namespace {

TEST(RankReduction, MaximaAndSumsByName) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double slowest = 1.5 + rank;       // max: the last rank's
  double bytes = 10.0 * (rank + 1);  // sum: 10 * (1 + ... + size)
  std::int64_t steps = 100 - rank;   // max: rank 0's
  const std::int64_t big = (std::int64_t{1} << 53) + 1;
  std::int64_t rows = big + rank;  // sum, exact
  pleshard::RankReduction reduction;
  reduction.max(slowest).sum(bytes).max(steps).sum(rows);
  reduction.run(MPI_COMM_WORLD);
  EXPECT_EQ(slowest, 1.5 + (size - 1));
  EXPECT_EQ(bytes, 10.0 * size * (size + 1) / 2);
  EXPECT_EQ(steps, 100);
  EXPECT_EQ(rows, big * size + std::int64_t{size} * (size - 1) / 2);
}

TEST(RankReduction, NothingRegistered) {
  pleshard::RankReduction reduction;
  reduction.run(MPI_COMM_WORLD);  // returns on every rank
}

}  // namespace
