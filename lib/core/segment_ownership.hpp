#pragma once
// Who owns a name of a node's shared memory (/dev/shm, or a hugetlbfs mount where a node's
// segment lies on reserved 2 MiB pages: core/huge_pages.hpp), told the same way by every process
// that shares it, in whatever PID namespace (containers with the host's IPC, docker
// --ipc=host): a segment's maker holds a lock on it for as long as its name exists, and the
// kernel drops the lock when the maker dies. A process id could not tell it: another
// namespace sees other ids, or none.

#include <filesystem>
#include <string>

namespace pleshard {

// A shared-memory segment this process made in `directory`, under a name of pleshard's own
// form ("/pleshard-seg.<32 random hex digits>", never made twice), and holds: empty when made
// (its maker sizes it through fd(), under the lock), its name removed when the object goes.
class OwnedSegment {
 public:
  // InputError, naming `what`, where the node cannot make one.
  explicit OwnedSegment(const std::string& what, const std::filesystem::path& directory = "/dev/shm");
  ~OwnedSegment();
  OwnedSegment(const OwnedSegment&) = delete;
  OwnedSegment& operator=(const OwnedSegment&) = delete;

  // The name as shm_open takes it ("/..."), and the file's path (the directory's, then the name).
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] int fd() const { return fd_; }

 private:
  std::string name_;
  std::string path_;
  int fd_ = -1;  // open, and locked, until the name is removed
};

// Removes the names in `directory` that pleshard made and whose makers are provably gone (a
// job killed while its first rank made a segment): names of pleshard's form whose lock is
// free although it was taken once. Every other name stays: a live segment, one whose maker
// has not locked it yet, and any other program's (also an older pleshard's "pleshard.<pid>.<n>",
// whose maker's life no lock tells). How many it removed.
int remove_stale_segments(const std::filesystem::path& directory = "/dev/shm");

}  // namespace pleshard
