#pragma once
// Checks on the files a job reads: that a path names a regular file before anything opens
// it (opening a FIFO would block for ever), and that a file read during a job is still the
// one the job opened (a file truncated or replaced under a running job is an error, not
// rows served from a cache).

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace pleshard {

// InputError "<path>: <what> not found" or "<path>: <what> is not a regular file (a FIFO,
// a directory, ...)".
void require_regular_file(const std::filesystem::path& path, const std::string& what);

class PreadFile;

// A digest of what an open file of `size` bytes holds, from a sample of it: its size, its
// first and last MiB (a checkpoint's header, an HDF5 file's metadata) and 4 KiB at 62 evenly
// spaced places. Equal for copies under any name; InputError naming the file when it cannot
// be read.
[[nodiscard]] std::uint64_t sampled_content_digest(const PreadFile& file, std::uint64_t size);

// A file as a job opened it: taken from the open descriptor, which it reads through for its
// samples, so that a file replaced at its path while it was being opened or since is
// described as the one read. The PreadFile outlives it.
class FileIdentity {
 public:
  explicit FileIdentity(const PreadFile& file);
  // InputError where the path no longer names the file opened (replaced or removed): a
  // check that only a replacement fails, not a write or a change of mode.
  void check_same_file() const;
  // InputError naming the file when it has changed since (its size, modification or change
  // time, or the file the path names). A change time alone moves on a write whose
  // modification time was set back, and also on a rename, a link or a change of mode.
  void check_unchanged() const;
  // A digest of the file's state as opened: its inode, size, and modification and change
  // times. Any write to it, a replacement or a copy changes it (the change time cannot be
  // set back), and so do a rename, a link or a change of mode; reading it or another
  // spelling of its path does not.
  [[nodiscard]] std::uint64_t state() const;
  // sampled_content_digest of the file opened.
  [[nodiscard]] std::uint64_t sampled_content() const;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  // The path's stat where it still names the file opened; InputError "removed <when>" or
  // "replaced <when>" otherwise.
  [[nodiscard]] struct stat stat_same_file(const std::string& when) const;

  const PreadFile* file_;
  std::string path_;
  std::uint64_t device_ = 0;
  std::uint64_t inode_ = 0;
  std::int64_t size_ = 0;
  std::int64_t mtime_ns_ = 0;
  std::int64_t ctime_ns_ = 0;
};

}  // namespace pleshard
