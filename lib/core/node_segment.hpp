#pragma once
// Bytes one node's ranks share: a POSIX shared-memory segment made by the group's first
// rank (on 2 MiB pages where the machine offers them, on the maker's NUMA home:
// core/huge_pages.hpp) and mapped by every rank of the group, its name removed as soon as
// all have mapped it, so that nothing is left behind however the job ends afterwards (the
// memory goes with the last mapping). Until then the maker holds a lock on it
// (core/segment_ownership.hpp): a job killed in that moment leaves a name behind that the
// next segment made on the node removes, its lock being free; a live job's name, in
// whatever container, and names pleshard did not make, are never removed; no segment is
// ever opened by a name it did not make in this job.

#include <cstddef>
#include <cstdint>
#include <string>

#include <mpi.h>

namespace pleshard {

class NodeSegment {
 public:
  // Collective over `group` (ranks of one machine); `what` names the bytes in messages.
  // InputError (agreed over the group) where the node's shared memory cannot hold them.
  NodeSegment(MPI_Comm group, std::size_t bytes, const std::string& what);
  ~NodeSegment();
  NodeSegment(const NodeSegment&) = delete;
  NodeSegment& operator=(const NodeSegment&) = delete;

  [[nodiscard]] std::uint8_t* data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return bytes_; }
  // Whether this rank made the segment (and fills it).
  [[nodiscard]] bool maker() const { return maker_; }

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t mapped_ = 0;
  bool maker_ = false;
};

}  // namespace pleshard
