#pragma once
// Checks on the files a job reads: that a path names a regular file before anything opens
// it (opening a FIFO would block for ever), and that a file read during a job is still the
// one the job opened (a file truncated or replaced under a running job is an error, not
// rows served from a cache).

#include <cstdint>
#include <filesystem>
#include <string>

namespace pleshard {

// InputError "<path>: <what> not found" or "<path>: <what> is not a regular file (a FIFO,
// a directory, ...)".
void require_regular_file(const std::filesystem::path& path, const std::string& what);

// A digest of what a file holds, from a sample of it: its size, its first and last MiB (a
// checkpoint's header, an HDF5 file's metadata) and 4 KiB at 62 evenly spaced places.
// Equal for copies under any name; SystemError naming the file when it cannot be read.
[[nodiscard]] std::uint64_t sampled_content_digest(const std::filesystem::path& path);

class PreadFile;

// A file as a job opened it: taken from the open descriptor, so that a file replaced at its
// path while it was being opened is described as the one read.
class FileIdentity {
 public:
  explicit FileIdentity(const PreadFile& file);
  // InputError naming the file when it has changed since (its size, modification or change
  // time, or the file the path names). A change time alone moves on a write whose
  // modification time was set back, and also on a rename, a link or a change of mode.
  void check_unchanged() const;
  // A digest of the file's state as opened: its inode, size, and modification and change
  // times. Any write to it, a replacement or a copy changes it (the change time cannot be
  // set back), and so do a rename, a link or a change of mode; reading it or another
  // spelling of its path does not.
  [[nodiscard]] std::uint64_t state() const;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::uint64_t device_ = 0;
  std::uint64_t inode_ = 0;
  std::int64_t size_ = 0;
  std::int64_t mtime_ns_ = 0;
  std::int64_t ctime_ns_ = 0;
};

}  // namespace pleshard
