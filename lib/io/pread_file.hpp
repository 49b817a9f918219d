#pragma once
// A file read with pread at random offsets (RAII): the disk tier's path to the rows.
// Unlike a memory map, a file that shrinks under it gives a clear error, not SIGBUS.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace pleshard {

// O_DIRECT's block: the alignment of a direct read's offset, length and buffer.
inline constexpr std::uint64_t k_direct_block_bytes = 4096;

class PreadFile {
 public:
  // Opens read-only and hints random access (no readahead past each read).
  explicit PreadFile(const std::filesystem::path& path);
  ~PreadFile();
  PreadFile(const PreadFile&) = delete;
  PreadFile& operator=(const PreadFile&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  // Fills `out` from byte `offset`; throws InputError naming the file on a short read.
  void read_exact(std::uint64_t offset, std::span<std::uint8_t> out) const;
  // read_exact, but the 4 KiB blocks inside the read go past the page cache (O_DIRECT)
  // where the file allows it and `out` lies at the file offset's alignment (its address
  // and `offset` equal modulo 4 KiB): a load of a table into host memory, which would
  // otherwise hold it twice. The pieces before and after come through the cache.
  void read_exact_past_cache(std::uint64_t offset, std::span<std::uint8_t> out) const;

  // For readers that issue reads themselves (io/file_reads.hpp): the descriptor, and one
  // opened with O_DIRECT (past the page cache) where the file system allows it, else -1.
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] int direct_fd() const { return direct_fd_; }
  // A direct read failed for its alignment: reads of this file go through the page cache.
  void refuse_direct() const { direct_fd_ = -1; }

 private:
  // Reads `out` from `fd` until whole; fewer bytes only where `fd` is the direct one and the
  // device refused the read's alignment (direct reads are then off).
  std::size_t read_from(int fd, std::uint64_t offset, std::span<std::uint8_t> out) const;

  std::string path_;
  int fd_ = -1;
  int direct_open_ = -1;                     // owned
  mutable std::atomic<int> direct_fd_ = -1;  // direct_open_ while direct reads work (threads read it)
};

// Writes back and drops the file's cached pages, so that the next reads come from the
// device (benchmarks of cold reads). Pages mapped by some process stay.
void drop_cached_pages(const std::filesystem::path& path);

}  // namespace pleshard
