#include "core/node_segment.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "core/mpi_check.hpp"

namespace pleshard {

namespace {

constexpr const char* k_prefix = "pleshard.";

// "/pleshard.<pid>.<n>": the maker's process id first, so that a stale name tells whose it was.
std::string segment_name(long pid, std::uint64_t n) {
  return "/" + std::string(k_prefix) + std::to_string(pid) + "." + std::to_string(n);
}

std::atomic<std::uint64_t> g_made{0};

}  // namespace

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

NodeSegment::NodeSegment(MPI_Comm group, std::size_t bytes, const std::string& what) : bytes_(bytes) {
  int rank = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(group, &rank));
  maker_ = rank == 0;
  mapped_ = std::max<std::size_t>(1, bytes);
  char name[64] = {};
  // The maker makes and sizes it (its pages reserved now: a node short of shared memory is
  // refused here, not a SIGBUS at the first write), then says its name.
  collective_try(group, [&] {
    if (!maker_) return;
    (void)remove_stale_segments();
    const std::string made = segment_name(static_cast<long>(::getpid()), g_made++);
    const int fd = ::shm_open(made.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) throw InputError(what + ": cannot make shared memory " + made + ": " + std::strerror(errno));
    const int reserved = ::posix_fallocate(fd, 0, static_cast<off_t>(mapped_));
    void* p = reserved == 0 ? ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    const int failure = reserved != 0 ? reserved : errno;
    ::close(fd);
    if (p == MAP_FAILED) {
      ::shm_unlink(made.c_str());
      throw InputError(what + ": the node's shared memory (/dev/shm) cannot hold " + std::to_string(bytes) +
                       " bytes: " + std::strerror(failure) + " (--no-shared-tables keeps a copy per rank)");
    }
    data_ = static_cast<std::uint8_t*>(p);
    std::strncpy(name, made.c_str(), sizeof name - 1);
  });
  PLESHARD_MPI_CHECK(MPI_Bcast(name, sizeof name, MPI_CHAR, 0, group));
  // Every other rank maps it; then the name goes.
  const std::exception_ptr opened = [&]() -> std::exception_ptr {
    if (maker_) return nullptr;
    try {
      const int fd = ::shm_open(name, O_RDWR, 0600);
      if (fd < 0) throw InputError(what + ": cannot open shared memory " + name + ": " + std::strerror(errno));
      void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      const int failure = errno;
      ::close(fd);
      if (p == MAP_FAILED)
        throw InputError(what + ": cannot map shared memory " + name + ": " + std::strerror(failure));
      data_ = static_cast<std::uint8_t*>(p);
    } catch (const std::exception&) {
      return std::current_exception();
    }
    return nullptr;
  }();
  PLESHARD_MPI_CHECK(MPI_Barrier(group));
  if (maker_) ::shm_unlink(name);
  try {
    rethrow_agreed(group, opened);
  } catch (...) {
    if (data_ != nullptr) ::munmap(data_, mapped_);
    throw;
  }
  if (maker_ && fault_plan().kill_in_shared_load) ::raise(SIGKILL);
}

NodeSegment::~NodeSegment() {
  if (data_ != nullptr) ::munmap(data_, mapped_);
}

}  // namespace pleshard
