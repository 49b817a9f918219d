#include "core/segment_ownership.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace pleshard {

namespace {

constexpr const char* k_prefix = "pleshard.";

// "/pleshard.<pid>.<n>": the maker's process id first, so that a stale name tells whose it was.
std::string segment_name(long pid, std::uint64_t n) {
  return "/" + std::string(k_prefix) + std::to_string(pid) + "." + std::to_string(n);
}

std::atomic<std::uint64_t> g_made{0};

}  // namespace

OwnedSegment::OwnedSegment(const std::string& what) : name_(segment_name(static_cast<long>(::getpid()), g_made++)) {
  fd_ = ::shm_open(name_.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd_ < 0) throw InputError(what + ": cannot make shared memory " + name_ + ": " + std::strerror(errno));
}

OwnedSegment::~OwnedSegment() {
  ::shm_unlink(name_.c_str());
  ::close(fd_);
}

int remove_stale_segments() {
  int removed = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(k_prefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + std::strlen(k_prefix), nullptr, 10);
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH))
      removed += ::shm_unlink(("/" + name).c_str()) == 0 ? 1 : 0;
  }
  return removed;
}

}  // namespace pleshard
