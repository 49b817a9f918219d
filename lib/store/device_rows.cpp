#include "store/device_rows.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "core/mpi_check.hpp"
#include "core/watched_collectives.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/gpu_device.hpp"

namespace pleshard {

namespace {

// How long the maker waits at the close for the others to unmap its rows: past it, a peer
// has failed or left without closing, and the rows are left to the process's end rather than
// freed under a mapping that may still read them.
constexpr auto k_close_wait = std::chrono::seconds(30);

}  // namespace

std::uint8_t* allocate_device_rows(std::size_t bytes, const std::string& what) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it
    throw InputError(what + ": cannot allocate " + std::to_string(bytes) + " bytes (" +
                     std::to_string(kernels::gpu_memory().free) + " bytes of GPU memory free)");
  }
  PLESHARD_CUDA_CHECK(status);
  return static_cast<std::uint8_t*>(p);
}

SharedDeviceRows::SharedDeviceRows(MPI_Comm group, std::size_t bytes, const std::string& what) {
  group_ = watched_dup(group, what + ": the group sharing its rows");
  int rank = 0;
  int ranks = 1;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(group_, &rank));
  PLESHARD_MPI_CHECK(MPI_Comm_size(group_, &ranks));
  maker_ = rank == 0;
  try {
    // One GPU for the whole group: its rows are one allocation on it.
    const std::array<std::uint64_t, 2> mine = kernels::gpu_uuid();
    std::vector<std::array<std::uint64_t, 2>> all(static_cast<std::size_t>(ranks));
    watched_allgather(mine.data(), all.data(), 2, MPI_UINT64_T, group_, what + ": the group's GPUs");
    cudaIpcMemHandle_t handle{};
    collective_try(group_, [&] {
      if (std::any_of(all.begin(), all.end(), [&](const auto& gpu) { return gpu != all.front(); }))
        throw InputError(what + ": the " + std::to_string(ranks) +
                         " ranks that read its rows in place use more than one GPU; peer reads map one GPU's "
                         "memory (reads between GPUs are not built yet: use --exchange owner)");
      if (!maker_ || bytes == 0) return;
      data_ = allocate_device_rows(bytes, what);
      PLESHARD_CUDA_CHECK(cudaIpcGetMemHandle(&handle, data_));
    });
    if (bytes == 0) return;
    watched_bcast(&handle, sizeof handle, MPI_BYTE, 0, group_, what + ": the handle of its rows");
    collective_try(group_, [&] {
      if (maker_) return;
      const cudaError_t status =
          fault_plan().peer_map_failure
              ? cudaErrorInvalidDevice
              : cudaIpcOpenMemHandle(reinterpret_cast<void**>(&data_), handle, cudaIpcMemLazyEnablePeerAccess);
      if (status != cudaSuccess) {
        cudaGetLastError();
        throw InputError(what + ": cannot map the rows of the group's first rank (" + cudaGetErrorString(status) +
                         "): peer reads need the group's processes on one machine, in one container, with CUDA IPC");
      }
      mapped_ = true;
    });
  } catch (...) {
    release();
    throw;
  }
}

SharedDeviceRows::~SharedDeviceRows() { release(); }

void SharedDeviceRows::release() noexcept {
  if (mapped_) cudaIpcCloseMemHandle(data_);
  mapped_ = false;
  if (group_ == MPI_COMM_NULL) return;
  // The maker frees its rows once every rank has unmapped them (a barrier that gives up
  // after k_close_wait: a peer that failed leaves the rows to the process's end).
  bool closed = false;
  MPI_Request request = MPI_REQUEST_NULL;
  if (MPI_Ibarrier(group_, &request) == MPI_SUCCESS) {
    const auto until = std::chrono::steady_clock::now() + k_close_wait;
    int done = 0;
    while (MPI_Test(&request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done == 0 &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    closed = done != 0;
  }
  if (maker_ && data_ != nullptr && closed) cudaFree(data_);
  data_ = nullptr;
  if (closed) MPI_Comm_free(&group_);  // else left: a pending barrier still names it
  group_ = MPI_COMM_NULL;
}

}  // namespace pleshard
