#include "io/file_checks.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/digest.hpp"
#include "core/error.hpp"
#include "io/pread_file.hpp"

namespace pleshard {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

struct stat stat_of(const std::string& path, const std::string& what) {
  struct stat s {};
  if (::stat(path.c_str(), &s) != 0)
    throw InputError(path + ": " + what + (errno == ENOENT ? " not found" : std::string(": ") + std::strerror(errno)));
  return s;
}

std::int64_t nanoseconds(const struct timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

}  // namespace

void require_regular_file(const std::filesystem::path& path, const std::string& what) {
  const struct stat s = stat_of(path.string(), what);
  if (!S_ISREG(s.st_mode)) throw InputError(path.string() + ": " + what + " is " + kind_of(s.st_mode) + ", not a file");
}

std::uint64_t sampled_content_digest(const PreadFile& file, std::uint64_t size) {
  constexpr std::uint64_t k_end_bytes = 1u << 20;
  constexpr std::uint64_t k_sample_bytes = 4096;
  constexpr int k_samples = 62;
  Digest digest;
  digest.add(size);
  std::vector<std::uint8_t> buffer;
  const auto take = [&](std::uint64_t at, std::uint64_t bytes) {
    buffer.resize(static_cast<std::size_t>(std::min(bytes, size - std::min(at, size))));
    file.read_exact(at, buffer);
    digest.add(buffer);
  };
  take(0, k_end_bytes);
  take(size > k_end_bytes ? size - k_end_bytes : 0, k_end_bytes);
  for (int i = 1; i <= k_samples; ++i) take(size / (k_samples + 1) * static_cast<std::uint64_t>(i), k_sample_bytes);
  return digest.value();
}

FileIdentity::FileIdentity(const PreadFile& file) : file_(&file), path_(file.path()) {
  struct stat s {};
  if (::fstat(file.fd(), &s) != 0) throw SystemError(path_ + ": fstat: " + std::strerror(errno));
  device_ = static_cast<std::uint64_t>(s.st_dev);
  inode_ = static_cast<std::uint64_t>(s.st_ino);
  size_ = static_cast<std::int64_t>(s.st_size);
  mtime_ns_ = nanoseconds(s.st_mtim);
  ctime_ns_ = nanoseconds(s.st_ctim);
}

std::uint64_t FileIdentity::state() const {
  // Not the device: a file of a shared file system may have another device number on each
  // node, and ranks of the same job must agree on its state.
  return Digest(inode_)
      .add(static_cast<std::uint64_t>(size_))
      .add(static_cast<std::uint64_t>(mtime_ns_))
      .add(static_cast<std::uint64_t>(ctime_ns_))
      .value();
}

std::uint64_t FileIdentity::sampled_content() const {
  return sampled_content_digest(*file_, static_cast<std::uint64_t>(size_));
}

struct stat FileIdentity::stat_same_file(const std::string& when) const {
  struct stat s {};
  if (::stat(path_.c_str(), &s) != 0) throw InputError(path_ + ": removed " + when + " (" + std::strerror(errno) + ")");
  if (static_cast<std::uint64_t>(s.st_dev) != device_ || static_cast<std::uint64_t>(s.st_ino) != inode_)
    throw InputError(path_ + ": replaced " + when);
  return s;
}

void FileIdentity::check_same_file() const { (void)stat_same_file("while being opened"); }

void FileIdentity::check_unchanged() const {
  const struct stat s = stat_same_file("under the running job");
  if (static_cast<std::int64_t>(s.st_size) != size_)
    throw InputError(path_ + ": changed under the running job (" + std::to_string(size_) + " bytes when opened, " +
                     std::to_string(static_cast<std::int64_t>(s.st_size)) + " now)");
  if (nanoseconds(s.st_mtim) != mtime_ns_ || nanoseconds(s.st_ctim) != ctime_ns_)
    throw InputError(path_ + ": modified under the running job (written, renamed, linked or its mode changed)");
}

}  // namespace pleshard
