// A descriptor handed from a group's first rank to the others: each gets its own descriptor
// of the same open file (what the first wrote, all read). Runs on 1 to 3 ranks, also as
// groups of 2 ranks.

#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "core/descriptor_passing.hpp"

namespace {

using namespace pleshard;

void handed_over(MPI_Comm group) {
  int rank = 0;
  MPI_Comm_rank(group, &rank);
  const std::string text = "rows of the group's first rank";
  int fd = -1;
  if (rank == 0) {
    fd = memfd_create("pleshard-test", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
  }
  const int got = share_descriptor(group, fd, "test descriptor");
  ASSERT_GE(got, 0);
  if (rank != 0) EXPECT_NE(got, fd);  // a descriptor of this process's own
  std::string read(text.size(), '\0');
  EXPECT_EQ(::pread(got, read.data(), read.size(), 0), static_cast<ssize_t>(text.size()));
  EXPECT_EQ(read, text);
  MPI_Barrier(group);
  ::close(got);
}

TEST(DescriptorPassing, EveryRankOpensTheFirstRanksFile) { handed_over(MPI_COMM_WORLD); }

TEST(DescriptorPassing, GroupsOfTwo) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm pair = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);
  handed_over(pair);
  MPI_Comm_free(&pair);
}

}  // namespace
