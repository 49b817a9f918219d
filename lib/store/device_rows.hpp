#pragma once
// The device tier's memory: a rank's own rows, or rows in GPU memory that the ranks of a
// group read in place (`--exchange peer-read`): one address range that every rank of the
// group maps, its pages in one part per rank, each made on that rank's GPU through CUDA's
// virtual memory API (2 MiB pages) and mapped by the others from a file descriptor it hands
// them (core/descriptor_passing.hpp). Ranks that share a GPU thus read one allocation's
// pages; ranks of several GPUs read the others' parts over their peer links. (Through a
// legacy CUDA IPC mapping the steps of 4 ranks sharing a GPU took 2-158x longer:
// docs/performance-log.md.) Each rank fills its balanced part of the rows wherever its pages
// lie; a part's memory goes with the last process that maps it, so a rank that ends or fails
// first frees nothing another still reads. Built only with CUDA.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>

namespace pleshard {

// `bytes` of GPU memory (null for none); a failure (memory taken since the fit check, or
// never checked: the benchmarks) is an InputError naming `what`, the bytes and the GPU's free
// memory.
[[nodiscard]] std::uint8_t* allocate_device_rows(std::size_t bytes, const std::string& what);

class SharedDeviceRows {
 public:
  // Collective over `group` (ranks of one node), `bytes` the same on every rank. InputError,
  // agreed over the group and naming `what`, where a rank cannot allocate its part, cannot
  // map another's (another container or network namespace, or the test fault
  // PLESHARD_FAULT_PEER_MAP), or its GPU cannot reach another's memory (no peer access).
  SharedDeviceRows(MPI_Comm group, std::size_t bytes, const std::string& what);
  ~SharedDeviceRows();
  SharedDeviceRows(const SharedDeviceRows&) = delete;
  SharedDeviceRows& operator=(const SharedDeviceRows&) = delete;

  [[nodiscard]] std::uint8_t* data() const { return data_; }

 private:
  void release() noexcept;

  struct Part {
    std::size_t offset = 0;         // in the range, whole pages
    std::size_t size = 0;           // bytes, whole pages; 0: the rank has none (a small table)
    unsigned long long handle = 0;  // CUmemGenericAllocationHandle, made or imported
    bool held = false;              // the handle is this process's to release
    bool mapped = false;
  };

  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;       // the range's bytes: every part's pages
  unsigned long long va_ = 0;  // CUdeviceptr of the range
  std::vector<Part> parts_;    // by rank of the group
};

}  // namespace pleshard
