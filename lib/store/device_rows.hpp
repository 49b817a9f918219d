#pragma once
// The device tier's memory: a rank's own rows, or rows in GPU memory that the ranks of a group read in place
// (`--exchange peer-read`): one allocation on the GPU the group's ranks share, made by the group's first rank and
// mapped by the others through CUDA IPC, so that every rank of the group addresses the group's rows as one table while
// the GPU holds them once. Each rank fills its part; the maker frees the rows only after every other rank has unmapped
// them. Built only with CUDA.

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
  // rank cannot map the maker's rows (no IPC between the processes: another container, or
  // the test fault PLESHARD_FAULT_PEER_MAP).
  SharedDeviceRows(MPI_Comm group, std::size_t bytes, const std::string& what);
  ~SharedDeviceRows();
  SharedDeviceRows(const SharedDeviceRows&) = delete;
  SharedDeviceRows& operator=(const SharedDeviceRows&) = delete;

  [[nodiscard]] std::uint8_t* data() const { return data_; }

 private:
  void release() noexcept;

  MPI_Comm group_ = MPI_COMM_NULL;  // a duplicate: the close's agreement is the group's own
  std::uint8_t* data_ = nullptr;
  bool maker_ = false;
  bool mapped_ = false;  // a peer's mapping of the maker's rows
};

}  // namespace pleshard
