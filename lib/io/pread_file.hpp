#pragma once
// A file read with pread at random offsets (RAII): the disk tier's path to the rows.
// Unlike a memory map, a file that shrinks under it gives a clear error, not SIGBUS.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace pleshard {

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

 private:
  std::string path_;
  int fd_ = -1;
};

// Writes back and drops the file's cached pages, so that the next reads come from the
// device (benchmarks of cold reads). Pages mapped by some process stay.
void drop_cached_pages(const std::filesystem::path& path);

}  // namespace pleshard
