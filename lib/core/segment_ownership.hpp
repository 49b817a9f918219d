#pragma once
// Who owns a name of a node's shared memory (/dev/shm): the segment a process makes and holds
// under a name of its own, and the removal of the names that killed makers left behind.

#include <string>

namespace pleshard {

// A shared-memory segment this process made (empty: its maker sizes it through fd()), its name
// held until the object goes, which removes the name.
class OwnedSegment {
 public:
  // InputError, naming `what`, where the node cannot make one.
  explicit OwnedSegment(const std::string& what);
  ~OwnedSegment();
  OwnedSegment(const OwnedSegment&) = delete;
  OwnedSegment& operator=(const OwnedSegment&) = delete;

  // The name as shm_open takes it ("/...").
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] int fd() const { return fd_; }

 private:
  std::string name_;
  int fd_ = -1;
};

// The names of segments under /dev/shm whose making process is gone (a job killed while it
// made them): removed; how many.
int remove_stale_segments();

}  // namespace pleshard
