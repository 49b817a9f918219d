#include "core/node_segment.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "core/mpi_check.hpp"
#include "core/segment_ownership.hpp"
#include "core/watched_collectives.hpp"

namespace pleshard {

NodeSegment::NodeSegment(MPI_Comm group, std::size_t bytes, const std::string& what) : bytes_(bytes) {
  int rank = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(group, &rank));
  maker_ = rank == 0;
  mapped_ = std::max<std::size_t>(1, bytes);
  char name[64] = {};
  // The maker's hold on the name: it goes (the name with it, where a failure came first) at
  // the end of this constructor, after the name is removed below.
  std::optional<OwnedSegment> made;
  // The maker makes and sizes it (its pages reserved now: a node short of shared memory is
  // refused here, not a SIGBUS at the first write), then says its name.
  collective_try(group, [&] {
    if (!maker_) return;
    (void)remove_stale_segments();
    made.emplace(what);
    const int reserved = ::posix_fallocate(made->fd(), 0, static_cast<off_t>(mapped_));
    void* p = reserved == 0 ? ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_SHARED, made->fd(), 0) : MAP_FAILED;
    const int failure = reserved != 0 ? reserved : errno;
    if (p == MAP_FAILED)
      throw InputError(what + ": the node's shared memory (/dev/shm) cannot hold " + std::to_string(bytes) +
                       " bytes: " + std::strerror(failure) + " (--no-shared-tables keeps a copy per rank)");
    data_ = static_cast<std::uint8_t*>(p);
    std::strncpy(name, made->name().c_str(), sizeof name - 1);
  });
  watched_bcast(name, sizeof name, MPI_CHAR, 0, group, what + ": the shared segment's name");
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
  watched_barrier(group, what + ": every rank's mapping of the shared segment");
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
