// Which ranks have a GPU of their own, decided by the GPUs' UUIDs. No GPU is needed: each
// rank passes the UUID its device would report, as under Slurm's per-task masks (every
// rank sees one device as ordinal 0, the devices differ) or with ranks sharing devices.

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "dist/gpu_binding.hpp"

namespace {

using namespace pleshard;

GpuUuid uuid(std::uint64_t n) { return GpuUuid{{0x9e3779b97f4a7c15ULL * (n + 1), n}}; }

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

TEST(RanksPerGpu, CountsTheMostRanksOnOneUuid) {
  EXPECT_EQ(ranks_per_gpu({}), 0);
  const std::vector<GpuUuid> masked{uuid(0), uuid(1), uuid(2), uuid(3)};  // one device each, all differ
  EXPECT_EQ(ranks_per_gpu(masked), 1);
  EXPECT_TRUE(gpus_distinct(masked));
  const std::vector<GpuUuid> shared{uuid(0), uuid(1), uuid(0), uuid(1), uuid(0)};
  EXPECT_EQ(ranks_per_gpu(shared), 3);
  EXPECT_FALSE(gpus_distinct(shared));
  // Words that differ in the second half only are different GPUs.
  EXPECT_TRUE(gpus_distinct(std::vector<GpuUuid>{GpuUuid{{7, 1}}, GpuUuid{{7, 2}}}));
}

TEST(AgreeGpuBinding, DistinctUuidsGiveEveryRankItsOwnGpu) {
  const GpuBinding b = agree_gpu_binding(MPI_COMM_WORLD, uuid(static_cast<std::uint64_t>(world_rank())));
  EXPECT_TRUE(b.own_gpu);
  EXPECT_EQ(b.ranks_sharing, 1);
  EXPECT_EQ(b.why, "");
}

TEST(AgreeGpuBinding, OneUuidForEveryRankIsShared) {
  const GpuBinding b = agree_gpu_binding(MPI_COMM_WORLD, uuid(42));
  EXPECT_EQ(b.own_gpu, world_size() == 1);
  EXPECT_EQ(b.ranks_sharing, world_size());  // the test's ranks are on one node
  if (world_size() > 1) {
    EXPECT_NE(b.why.find("GPUs are shared: on "), std::string::npos) << b.why;
    EXPECT_NE(b.why.find(std::to_string(world_size()) + " ranks drive 1 GPU, up to " + std::to_string(world_size()) +
                         " ranks on one"),
              std::string::npos)
        << b.why;
  }
}

TEST(AgreeGpuBinding, PairsOfRanksOnOneGpuAreSharedOnEveryRank) {
  // Ranks 0 and 1 share a GPU, 2 and 3 another; the last of an odd count has one alone.
  const GpuBinding b = agree_gpu_binding(MPI_COMM_WORLD, uuid(static_cast<std::uint64_t>(world_rank() / 2)));
  const int sharing = world_size() >= 2 ? 2 : 1;
  EXPECT_EQ(b.ranks_sharing, sharing);
  EXPECT_EQ(b.own_gpu, sharing == 1);
  // Every rank holds the same sentence (the node's, broadcast).
  int length = static_cast<int>(b.why.size());
  int longest = 0;
  MPI_Allreduce(&length, &longest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(length, longest);
}

TEST(AgreeGpuBinding, ARankWithoutAGpuFailsOnEveryRank) {
  const int last = world_size() - 1;
  std::optional<GpuUuid> mine;
  if (world_rank() != last) mine = uuid(static_cast<std::uint64_t>(world_rank()));
  try {
    (void)agree_gpu_binding(MPI_COMM_WORLD, mine);
    FAIL() << "no SystemError";
  } catch (const SystemError& e) {
    EXPECT_EQ(std::string(e.what()), "GPU binding: world rank " + std::to_string(last) + " sees no CUDA device");
  }
}

}  // namespace
