// The watched collectives give what MPI's blocking ones give, data traced to each sending
// rank, and a peer that is late by less than the stall limit is waited for, not ended.

#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include "core/watched_collectives.hpp"
#include "core/watched_wait.hpp"

namespace {

using namespace pleshard;

struct World {
  int rank = 0;
  int size = 1;
  World() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
};

TEST(WatchedCollectives, BroadcastReduceAndGatherCarryEveryRanksValues) {
  const World w;
  const int root = w.size - 1;
  std::int64_t sent[2] = {w.rank == root ? 41 : -1, w.rank == root ? 42 : -1};
  watched_bcast(sent, 2, MPI_INT64_T, root, MPI_COMM_WORLD, "test");
  EXPECT_EQ(sent[0], 41);
  EXPECT_EQ(sent[1], 42);

  std::int64_t values[2] = {w.rank, 100 * (w.rank + 1)};
  watched_allreduce(values, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, "test");
  EXPECT_EQ(values[0], std::int64_t{w.size} * (w.size - 1) / 2);
  EXPECT_EQ(values[1], 100 * std::int64_t{w.size} * (w.size + 1) / 2);

  const std::int64_t mine = 10 + w.rank;
  std::int64_t most = 0;
  watched_reduce(&mine, &most, 1, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD, "test");
  if (w.rank == 0) {
    EXPECT_EQ(most, 10 + w.size - 1);
  }

  std::vector<std::int64_t> all(static_cast<std::size_t>(w.size), -1);
  watched_allgather(&mine, all.data(), 1, MPI_INT64_T, MPI_COMM_WORLD, "test");
  for (int r = 0; r < w.size; ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], 10 + r);

  std::vector<std::int64_t> gathered(static_cast<std::size_t>(w.size), -1);
  watched_gather(&mine, gathered.data(), 1, MPI_INT64_T, 0, MPI_COMM_WORLD, "test");
  if (w.rank == 0) {
    for (int r = 0; r < w.size; ++r) EXPECT_EQ(gathered[static_cast<std::size_t>(r)], 10 + r);
  }

  // Rank r sends r + 1 values r * 100 + i.
  std::vector<std::int64_t> own;
  for (int i = 0; i <= w.rank; ++i) own.push_back(w.rank * 100 + i);
  std::vector<int> counts, offsets;
  int total = 0;
  for (int r = 0; r < w.size; ++r) {
    counts.push_back(r + 1);
    offsets.push_back(total);
    total += r + 1;
  }
  std::vector<std::int64_t> packed(static_cast<std::size_t>(total), -1);
  watched_gatherv(own.data(), static_cast<int>(own.size()), packed.data(), counts.data(), offsets.data(), MPI_INT64_T,
                  0, MPI_COMM_WORLD, "test");
  if (w.rank == 0) {
    for (int r = 0; r < w.size; ++r)
      for (int i = 0; i <= r; ++i)
        EXPECT_EQ(packed[static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)] + i)], r * 100 + i);
  }
}

TEST(WatchedCollectives, CommunicatorsAreMadeAsMpisOwn) {
  const World w;
  MPI_Comm dup = watched_dup(MPI_COMM_WORLD, "test");
  int size = 0;
  MPI_Comm_size(dup, &size);
  EXPECT_EQ(size, w.size);
  // Even and odd ranks, ordered from the last.
  MPI_Comm half = watched_split(dup, w.rank % 2, -w.rank, "test");
  int half_size = 0;
  int half_rank = 0;
  MPI_Comm_size(half, &half_size);
  MPI_Comm_rank(half, &half_rank);
  EXPECT_EQ(half_size, (w.size + 1 - w.rank % 2) / 2);
  EXPECT_EQ(half_rank, (w.size - 1 - w.rank) / 2);  // the ranks of my parity above mine
  MPI_Comm node = watched_split_shared(dup, w.rank, "test");
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  EXPECT_EQ(node_size, w.size);  // the tests run on one machine
  for (MPI_Comm* c : {&node, &half, &dup}) MPI_Comm_free(c);
}

TEST(WatchedCollectives, APeerLateByLessThanTheLimitIsWaitedFor) {
  const World w;
  set_stall_limit(5);
  if (w.rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double start = MPI_Wtime();
  watched_barrier(MPI_COMM_WORLD, "test");
  if (w.rank != 0 && w.size > 1) {
    EXPECT_GT(MPI_Wtime() - start, 0.2);
  }  // it waited for rank 0
  set_stall_limit(std::numeric_limits<double>::infinity());
}

}  // namespace
