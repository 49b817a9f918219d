// One node's shared bytes: made by the group's first rank, mapped by every rank (what one
// writes, all read), no name left under /dev/shm once all have mapped it. Runs on 1 to 4
// ranks, also as groups of 2 ranks. (Which names a cleanup removes: test_segment_ownership.)

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "core/node_segment.hpp"

namespace {

using namespace pleshard;

// The file behind this process's mapping of `address`, as /proc/self/maps names it: a name
// tells no process id, so the mapping is asked ("<path> (deleted)" once its name is removed).
std::string mapped_file(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    unsigned long begin = 0;
    unsigned long end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &begin, &end) == 2 && begin <= at && at < end)
      return line.find('/') == std::string::npos ? "" : line.substr(line.find('/'));
  }
  return "";
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
  const std::string file = mapped_file(segment.data());
  EXPECT_EQ(file.rfind("/dev/shm/", 0), 0u) << file;
  EXPECT_TRUE(file.ends_with(" (deleted)")) << file << ": a name left after every rank mapped the segment";
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

}  // namespace
