#include "core/segment_ownership.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string_view>

#include "core/error.hpp"

namespace pleshard {

namespace {

// Not "pleshard." and more: pleshard before this form removed every such name whose text
// after the dot was not a live process id, so its jobs leave these names alone.
constexpr std::string_view k_prefix = "pleshard-seg.";
constexpr std::size_t k_random_digits = 32;

// Random, so never made twice (no name is ever taken for another segment, also not by a
// cleanup that removes a name it read a moment ago) and no process id needed.
std::string fresh_name() {
  std::random_device random;
  std::string name = "/" + std::string(k_prefix);
  for (std::size_t digits = 0; digits < k_random_digits; digits += 8) {
    char word[9];
    std::snprintf(word, sizeof word, "%08x", static_cast<unsigned>(random()));
    name += word;
  }
  return name;
}

// Exactly the form fresh_name makes, so that no other program's name is taken for one.
bool is_segment_name(std::string_view name) {
  return name.size() == k_prefix.size() + k_random_digits && name.starts_with(k_prefix) &&
         std::all_of(name.begin() + static_cast<std::ptrdiff_t>(k_prefix.size()), name.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// A segment is made with no permissions and given these only once its maker holds the lock,
// so that a cleanup that finds the lock free tells why: with these the maker is gone (or has
// removed the name already); with none the maker has not locked it yet (alive, or killed in
// that microsecond, leaving a name of no bytes that stays).
constexpr mode_t k_locked_mode = 0600;

// The segment at `path` (pleshard's form of name), removed where it is provably stale: its
// maker's lock is free although it was taken once. The lock is tried, never waited for.
bool remove_if_stale(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;  // gone meanwhile, or another user's
  struct stat status {};
  const bool stale = ::flock(fd, LOCK_SH | LOCK_NB) == 0 && ::fstat(fd, &status) == 0 && S_ISREG(status.st_mode) &&
                     (status.st_mode & 07777) == k_locked_mode;
  const bool removed = stale && ::unlink(path.c_str()) == 0;
  ::close(fd);
  return removed;
}

}  // namespace

// Files of the directory as shm_open opens /dev/shm's: no links followed, none inherited.
OwnedSegment::OwnedSegment(const std::string& what, const std::filesystem::path& directory)
    : name_(fresh_name()), path_(directory.string() + name_) {
  fd_ = ::open(path_.c_str(), O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);  // no permissions until locked
  if (fd_ < 0) throw InputError(what + ": cannot make shared memory " + path_ + ": " + std::strerror(errno));
  // A cleanup holds the lock for a moment only: waited for.
  int locked = 0;
  do locked = ::flock(fd_, LOCK_EX);
  while (locked != 0 && errno == EINTR);
  if (locked != 0 || ::fchmod(fd_, k_locked_mode) != 0) {
    const int failure = errno;
    ::unlink(path_.c_str());
    ::close(fd_);
    throw SystemError(what + ": cannot lock shared memory " + path_ + ": " + std::strerror(failure));
  }
}

OwnedSegment::~OwnedSegment() {
  // The name first: it never exists unlocked while its maker lives.
  ::unlink(path_.c_str());
  ::close(fd_);
}

int remove_stale_segments(const std::filesystem::path& directory) {
  int removed = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (is_segment_name(name) && remove_if_stale(entry.path().string())) ++removed;
  }
  return removed;
}

}  // namespace pleshard
