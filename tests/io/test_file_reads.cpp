// Reads of files in flight together (io/file_reads.hpp), from threads of pread and, past
// the page cache, through io_uring where this build and kernel have it, against the file's
// bytes: many more reads than fit in flight, any offset and length (block-aligned or not,
// inside one bounce block or larger), reads ending at the file's end, reads longer than the
// kernel returns at once (continued), and reads past the end or of a file truncated under
// the reader, which are errors naming the file.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "ckpt/checkpoint_fixtures.hpp"
#include "core/error.hpp"
#include "io/file_reads.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;
namespace fs = std::filesystem;

std::vector<std::uint8_t> write_random(const fs::path& path, std::size_t bytes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> data(bytes);
  for (auto& b : data) b = static_cast<std::uint8_t>(rng());
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(bytes));
  return data;
}

struct Path {
  ReadPath path;
  PageCache cache;
};
const Path k_paths[] = {{ReadPath::automatic, PageCache::use},
                        {ReadPath::automatic, PageCache::bypass},
                        {ReadPath::threads, PageCache::use},
                        {ReadPath::threads, PageCache::bypass}};

TEST(FileReads, EqualTheFilesBytes) {
  const ScratchDir dir;
  const std::size_t size = 3'000'001;  // not a whole number of blocks
  const auto data = write_random(dir / "f", size, 1);
  const PreadFile file(dir / "f");
  std::printf("file reads: %s%s\n", file_read_path(), file.direct_fd() >= 0 ? ", O_DIRECT" : ", page cache");
  std::mt19937_64 rng(2);
  struct Want {
    std::uint64_t offset;
    std::size_t bytes;
  };
  std::vector<Want> wants;
  for (int i = 0; i < 3000; ++i) {
    const std::size_t bytes = i % 10 == 0 ? 1 + rng() % 300'000 : 1 + rng() % 9000;  // some past one bounce block
    wants.push_back({rng() % (size - bytes + 1), bytes});
  }
  wants.push_back({0, size});            // the whole file
  wants.push_back({size - 1, 1});        // its last byte
  wants.push_back({4096, 4096});         // one aligned block
  wants.push_back({size - 5000, 5000});  // up to the end, crossing blocks
  for (const Path& path : k_paths) {
    std::vector<std::vector<std::uint8_t>> outs;
    std::vector<FileRead> reads;
    for (const Want& w : wants) outs.emplace_back(w.bytes);
    for (std::size_t i = 0; i < wants.size(); ++i) reads.push_back({&file, wants[i].offset, outs[i]});
    read_files(reads, path.path, path.cache);
    for (std::size_t i = 0; i < wants.size(); ++i)
      ASSERT_TRUE(
          std::equal(outs[i].begin(), outs[i].end(), data.begin() + static_cast<std::ptrdiff_t>(wants[i].offset)))
          << "read " << i << " at " << wants[i].offset << " of " << wants[i].bytes << " bytes";
  }
}

// Past the page cache: buffers at the file offset's alignment (the pinned tier's rows), so
// that the blocks inside each read go direct; reads shorter than a block, ending at the
// file's end mid-block, and a buffer at another alignment (through the cache).
TEST(FileReads, PastTheCacheIntoAlignedBuffersEqualTheFilesBytes) {
  const ScratchDir dir;
  const std::size_t size = 5'000'003;
  const auto data = write_random(dir / "f", size, 4);
  const PreadFile file(dir / "f");
  std::printf("past the cache: %s\n", file.direct_fd() >= 0 ? "O_DIRECT" : "page cache (no O_DIRECT here)");
  constexpr std::size_t k_block = 4096;
  std::vector<std::uint8_t> arena(size + 3 * k_block);
  std::uint8_t* aligned = arena.data() + (k_block - reinterpret_cast<std::uintptr_t>(arena.data()) % k_block);
  struct Want {
    std::uint64_t offset;
    std::size_t bytes;
    std::size_t misalign;  // 0: at the offset's alignment
  };
  const Want wants[] = {{0, size, 0},
                        {1, size - 1, 0},
                        {4095, 3 * k_block + 7, 0},
                        {8192, 100, 0},
                        {size - 20'000, 20'000, 0},
                        {123, 1'000'000, 0},
                        {123, 1'000'000, 1},
                        {4096, 8192, 0}};
  for (const Want& w : wants) {
    std::uint8_t* out = aligned + w.offset % k_block + w.misalign;
    std::fill_n(out, w.bytes, std::uint8_t{0xEE});
    const std::vector<FileRead> reads{{&file, w.offset, {out, w.bytes}}};
    read_files(reads, ReadPath::threads, PageCache::bypass);
    ASSERT_TRUE(std::equal(out, out + w.bytes, data.begin() + static_cast<std::ptrdiff_t>(w.offset)))
        << "at " << w.offset << ", " << w.bytes << " bytes, misaligned by " << w.misalign;
  }
  fs::resize_file(dir / "f", 10'000);  // truncated under the reader, mid-block
  const std::vector<FileRead> past{{&file, 0, {aligned, 50'000}}};
  EXPECT_THROW(read_files(past, ReadPath::threads, PageCache::bypass), InputError);
}

// Linux returns at most 0x7ffff000 bytes from one read (pread's or io_uring's): a read of more
// comes back short and must be continued. A sparse file of 2 GiB and more, its bytes known at
// a few places (around the point where the first read stops, and at the end), read whole in
// one request through every path.
TEST(FileReads, ShortReadsOfMoreThanTheKernelGivesAtOnceAreContinued) {
  const ScratchDir dir;
  constexpr std::uint64_t k_first = 1000;                 // the read's first byte
  constexpr std::uint64_t k_bytes = (2ull << 30) + 5000;  // more than 0x7ffff000
  constexpr std::uint64_t k_kernel_cap = 0x7ffff000;
  std::mt19937_64 rng(9);
  std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>> marks;
  for (const std::uint64_t at : {k_first, k_first + k_kernel_cap - 3000, k_first + k_bytes - 4096}) {
    std::vector<std::uint8_t> bytes(4096);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng() | 1);  // never a hole's zero
    marks.emplace_back(at, std::move(bytes));
  }
  {
    std::fstream f(dir / "sparse", std::ios::binary | std::ios::out | std::ios::trunc);
    for (const auto& [at, bytes] : marks) {
      f.seekp(static_cast<std::streamoff>(at));
      f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
  }
  ASSERT_EQ(fs::file_size(dir / "sparse"), k_first + k_bytes);
  const PreadFile file(dir / "sparse");
  std::vector<std::uint8_t> out(k_bytes);
  for (const Path& path : k_paths) {
    std::fill(out.begin(), out.end(), 0);
    const std::vector<FileRead> reads{{&file, k_first, out}};
    read_files(reads, path.path, path.cache);
    for (const auto& [at, bytes] : marks)
      ASSERT_TRUE(std::equal(bytes.begin(), bytes.end(), out.begin() + static_cast<std::ptrdiff_t>(at - k_first)))
          << "the bytes at " << at;
  }
}

TEST(FileReads, PastTheEndIsAnErrorNamingTheFile) {
  const ScratchDir dir;
  const std::size_t size = 100'000;
  (void)write_random(dir / "f", size, 3);
  const PreadFile file(dir / "f");
  for (const Path& path : k_paths) {
    std::vector<std::uint8_t> ok(10), past(10);
    // Reads in flight beside the failing one complete before the error comes back.
    std::vector<FileRead> reads{{&file, 0, ok}, {&file, size - 5, past}, {&file, 50, ok}};
    try {
      read_files(reads, path.path, path.cache);
      ADD_FAILURE() << "a read past the end succeeded";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find((dir / "f").string()), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    }
  }
  // Truncated under the reader: the rows it asks for are gone.
  fs::resize_file(dir / "f", 1000);
  for (const Path& path : k_paths) {
    std::vector<std::uint8_t> out(100);
    const std::vector<FileRead> reads{{&file, 5000, out}};
    EXPECT_THROW(read_files(reads, path.path, path.cache), InputError);
  }
}

}  // namespace
