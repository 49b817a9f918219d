#pragma once
// The device tier's memory: a rank's own rows, or rows in GPU memory that the ranks of a
// group read in place (`--exchange peer-read`): one allocation on the GPU the group's ranks
// share, made by the group's first rank through CUDA's virtual memory API and mapped by the
// others from a file descriptor it hands them (core/descriptor_passing.hpp), on the same 2 MiB
// pages (a mapping of legacy CUDA IPC read rows 30-50x slower: docs/performance-log.md). Each
// rank fills its part; the memory goes with the last process that maps it, so a rank that
// ends or fails first frees nothing another still reads. Built only with CUDA.

#include <cstddef>
#include <cstdint>
#include <string>

#include <mpi.h>

namespace pleshard {

// `bytes` of GPU memory (null for none); a failure (memory taken since the fit check, or
// never checked: the benchmarks) is an InputError naming `what`, the bytes and the GPU's free
// memory.
[[nodiscard]] std::uint8_t* allocate_device_rows(std::size_t bytes, const std::string& what);

class SharedDeviceRows {
 public:
  // Collective over `group` (ranks of one node). InputError, agreed over the group and
  // naming `what`, where its ranks use several GPUs, the maker cannot allocate `bytes`, or a
  // rank cannot map the maker's rows (another container or network namespace, or the test
  // fault PLESHARD_FAULT_PEER_MAP).
  SharedDeviceRows(MPI_Comm group, std::size_t bytes, const std::string& what);
  ~SharedDeviceRows();
  SharedDeviceRows(const SharedDeviceRows&) = delete;
  SharedDeviceRows& operator=(const SharedDeviceRows&) = delete;

  [[nodiscard]] std::uint8_t* data() const { return data_; }

 private:
  void release() noexcept;

  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;           // the mapping's bytes: whole pages of the allocation
  unsigned long long va_ = 0;      // CUdeviceptr of the mapping
  unsigned long long handle_ = 0;  // CUmemGenericAllocationHandle, made or imported
  bool held_ = false;              // handle_ is this process's to release
  bool mapped_ = false;
};

}  // namespace pleshard
