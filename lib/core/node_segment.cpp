#include "core/node_segment.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "core/huge_pages.hpp"
#include "core/mpi_check.hpp"
#include "core/option_names.hpp"
#include "core/segment_ownership.hpp"
#include "core/watched_collectives.hpp"

namespace pleshard {

NodeSegment::NodeSegment(MPI_Comm group, std::size_t bytes, const std::string& what) : bytes_(bytes) {
  int rank = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(group, &rank));
  maker_ = rank == 0;
  mapped_ = table_mapping_bytes(bytes);
  char name[4096] = {};  // the segment's path
  // The maker's hold on the name: it goes (the name with it, where a failure came first) at
  // the end of this constructor, after the name is removed below.
  std::optional<OwnedSegment> made;
  // The maker makes and sizes it, its pages taken now (core/huge_pages.hpp: on a hugetlbfs
  // mount's reserved pages where they hold it, else in /dev/shm, a node short of shared
  // memory refused here, not a SIGBUS at the first write), then says its path.
  collective_try(group, [&] {
    if (!maker_) return;
    int failure = 0;
    for (const std::filesystem::path& directory : shared_table_directories(mapped_)) {
      (void)remove_stale_segments(directory);
      made.emplace(what, directory);
      data_ = map_shared_table(made->fd(), mapped_, true);
      if (data_ != nullptr) break;
      failure = errno;
      made.reset();  // a hugetlbfs mount's pages ran out meanwhile: the next directory
    }
    if (data_ == nullptr)
      throw InputError(what + ": the node's shared memory (/dev/shm) cannot hold " + std::to_string(bytes) +
                       " bytes: " + std::strerror(failure) +
                       (option_offered(Option::no_shared_tables)
                            ? " (" + option_name(Option::no_shared_tables) + " keeps a copy per rank)"
                            : std::string()));
    std::strncpy(name, made->path().c_str(), sizeof name - 1);
  });
  watched_bcast(name, sizeof name, MPI_CHAR, 0, group, what + ": the shared segment's name");
  // Every other rank maps it; then the name goes.
  const std::exception_ptr opened = [&]() -> std::exception_ptr {
    if (maker_) return nullptr;
    try {
      const int fd = ::open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) throw InputError(what + ": cannot open shared memory " + name + ": " + std::strerror(errno));
      data_ = map_shared_table(fd, mapped_, false);
      const int failure = errno;
      ::close(fd);
      if (data_ == nullptr)
        throw InputError(what + ": cannot map shared memory " + name + ": " + std::strerror(failure));
    } catch (const std::exception&) {
      return std::current_exception();
    }
    return nullptr;
  }();
  watched_barrier(group, what + ": every rank's mapping of the shared segment");
  if (maker_) ::unlink(name);
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
