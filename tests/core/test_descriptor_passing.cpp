// Descriptors handed between the ranks of a group: each rank gets its own descriptor of every
// giver's open file (what each giver wrote, all read), and none where a rank gave none. Runs
// on 1 to 3 ranks, also as groups of 2 ranks.

#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/descriptor_passing.hpp"

namespace {

using namespace pleshard;

std::string text_of(int rank) { return "rows of the group's rank " + std::to_string(rank); }

// Every rank for which `gives` holds writes its text to a file of its own and hands it over.
template <typename Gives>
void handed_over(MPI_Comm group, Gives gives) {
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(group, &rank);
  MPI_Comm_size(group, &ranks);
  int fd = -1;
  if (gives(rank)) {
    fd = memfd_create("pleshard-test", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    const std::string text = text_of(rank);
    ASSERT_EQ(::pwrite(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
  }
  const std::vector<int> got = share_descriptors(group, fd, "test descriptor");
  ASSERT_EQ(got.size(), static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const int d = got[static_cast<std::size_t>(r)];
    if (!gives(r)) {
      EXPECT_LT(d, 0) << "rank " << r << " gave none";
      continue;
    }
    ASSERT_GE(d, 0) << "rank " << r << "'s descriptor";
    if (r == rank) {
      EXPECT_EQ(d, fd);
    } else {
      EXPECT_NE(d, fd);  // a descriptor of this process's own
    }
    const std::string text = text_of(r);
    std::string read(text.size(), '\0');
    EXPECT_EQ(::pread(d, read.data(), read.size(), 0), static_cast<ssize_t>(text.size()));
    EXPECT_EQ(read, text);
  }
  MPI_Barrier(group);
  for (const int d : got)
    if (d >= 0) ::close(d);
}

TEST(DescriptorPassing, EveryRankOpensTheFirstRanksFile) {
  handed_over(MPI_COMM_WORLD, [](int r) { return r == 0; });
}

TEST(DescriptorPassing, EveryRankOpensEveryRanksFile) {
  handed_over(MPI_COMM_WORLD, [](int) { return true; });
}

TEST(DescriptorPassing, RanksThatGiveNone) {
  handed_over(MPI_COMM_WORLD, [](int r) { return r % 2 == 1; });
}

TEST(DescriptorPassing, GroupsOfTwo) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm pair = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);
  handed_over(pair, [](int) { return true; });
  MPI_Comm_free(&pair);
}

}  // namespace
