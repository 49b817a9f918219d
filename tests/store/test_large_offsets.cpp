// Offsets past 2^32 bytes on the host side: the host tier over a 4.8 GB table
// (tests/store/large_table.hpp), and the disk tier's pread at 4.5 GB of a sparse file.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include "ckpt/checkpoint_fixtures.hpp"
#include "core/error.hpp"
#include "io/pread_file.hpp"
#include "large_table.hpp"
#include "store/host_table.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

TEST(LargeOffsets, HostTableOver4GiB) {
  const HostTable table(LargeTable::source(), {0, LargeTable::rows});
  const std::vector<std::int64_t> ids = LargeTable::ids();
  const std::vector<std::uint16_t> expected = LargeTable::expected(ids);
  std::vector<std::uint16_t> got(expected.size(), 0xCDCD);
  table.lookup(ids, OutDtype::bf16, got.data());
  EXPECT_EQ(got, expected);
}

TEST(LargeOffsets, PreadPast4GiBAndAtTheEnd) {
  const ScratchDir dir;
  const auto path = dir / "sparse.bin";
  const std::uint64_t at = 4'500'000'000ull;
  const std::uint8_t marker[5] = {1, 2, 3, 4, 5};
  {
    const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, marker, sizeof marker, static_cast<off_t>(at)), static_cast<ssize_t>(sizeof marker));
    ::close(fd);
  }
  const PreadFile file(path);
  std::uint8_t got[5] = {};
  file.read_exact(at, got);
  EXPECT_EQ(std::vector<std::uint8_t>(got, got + 5), std::vector<std::uint8_t>(marker, marker + 5));
  EXPECT_THROW(file.read_exact(at + 1, got), InputError);  // runs past the end
}

}  // namespace
