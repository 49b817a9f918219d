// One node's shared bytes: made by the group's first rank, mapped by every rank (what one
// writes, all read), no name left under /dev/shm once all have mapped it; a name a killed
// job left behind (its maker gone) is removed by the next segment made, and a live
// process's name is kept. Runs on 1 to 4 ranks, also as groups of 2 ranks.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/node_segment.hpp"
#include "core/segment_ownership.hpp"

namespace {

using namespace pleshard;

std::vector<std::string> our_names() {
  std::vector<std::string> names;
  const std::string mine = "pleshard." + std::to_string(::getpid()) + ".";
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm"))
    if (entry.path().filename().string().rfind(mine, 0) == 0) names.push_back(entry.path().filename().string());
  return names;
}

void shared_by(MPI_Comm group) {
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(group, &rank);
  MPI_Comm_size(group, &ranks);
  const std::size_t bytes = 3 * 4096 + 5;
  NodeSegment segment(group, bytes, "test segment");
  EXPECT_EQ(segment.size(), bytes);
  EXPECT_EQ(segment.maker(), rank == 0);
  EXPECT_TRUE(our_names().empty()) << "a name left after every rank mapped the segment";
  if (segment.maker())
    for (std::size_t i = 0; i < bytes; ++i) segment.data()[i] = static_cast<std::uint8_t>(i * 7 + 1);
  MPI_Barrier(group);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < bytes; ++i) wrong += segment.data()[i] != static_cast<std::uint8_t>(i * 7 + 1);
  EXPECT_EQ(wrong, 0u) << "rank " << rank << " of " << ranks;
  MPI_Barrier(group);
}

TEST(NodeSegment, MadeOnceMappedByEveryRank) {
  shared_by(MPI_COMM_WORLD);
  MPI_Comm pairs = MPI_COMM_NULL;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pairs);
  shared_by(pairs);
  MPI_Comm_free(&pairs);
}

TEST(NodeSegment, StaleNamesOfGoneMakersAreRemoved) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    // A name as a killed job would leave it (its maker gone: 2^22 + 1 is past Linux's
    // largest process id), and one of this live process.
    const std::string stale = "/pleshard.4194305.0";
    const std::string live = "/pleshard." + std::to_string(::getpid()) + ".999";
    for (const std::string& name : {stale, live}) {
      const int fd = ::shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
      ASSERT_GE(fd, 0);
      ::close(fd);
    }
    EXPECT_GE(remove_stale_segments(), 1);
    EXPECT_FALSE(std::filesystem::exists("/dev/shm" + stale));
    EXPECT_TRUE(std::filesystem::exists("/dev/shm" + live));
    ::shm_unlink(live.c_str());
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
