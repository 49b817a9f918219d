#include "store/device_rows.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "core/collective.hpp"
#include "core/descriptor_passing.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "core/mpi_check.hpp"
#include "core/watched_collectives.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/gpu_device.hpp"

namespace pleshard {

namespace {

// A driver call, looked up through the runtime: the library links no libcuda, which a
// machine without a GPU lacks.
template <typename F>
F driver_call(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  PLESHARD_CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found));
  if (fn == nullptr || found != cudaDriverEntryPointSuccess)
    throw SystemError(std::string("the CUDA driver offers no ") + name);
  return reinterpret_cast<F>(fn);
}

// CUDA's virtual memory API: memory made once and mapped by every process that holds a
// descriptor of it, at the page size the maker chose (2 MiB), and freed once every process
// has unmapped and released it.
struct VirtualMemory {
  decltype(&cuMemGetAllocationGranularity) granularity =
      driver_call<decltype(granularity)>("cuMemGetAllocationGranularity");
  decltype(&cuMemCreate) create = driver_call<decltype(create)>("cuMemCreate");
  decltype(&cuMemExportToShareableHandle) export_fd = driver_call<decltype(export_fd)>("cuMemExportToShareableHandle");
  decltype(&cuMemImportFromShareableHandle) import_fd =
      driver_call<decltype(import_fd)>("cuMemImportFromShareableHandle");
  decltype(&cuMemAddressReserve) reserve = driver_call<decltype(reserve)>("cuMemAddressReserve");
  decltype(&cuMemAddressFree) address_free = driver_call<decltype(address_free)>("cuMemAddressFree");
  decltype(&cuMemMap) map = driver_call<decltype(map)>("cuMemMap");
  decltype(&cuMemUnmap) unmap = driver_call<decltype(unmap)>("cuMemUnmap");
  decltype(&cuMemSetAccess) set_access = driver_call<decltype(set_access)>("cuMemSetAccess");
  decltype(&cuMemRelease) release = driver_call<decltype(release)>("cuMemRelease");
  decltype(&cuGetErrorString) error_string = driver_call<decltype(error_string)>("cuGetErrorString");

  static const VirtualMemory& get() {
    static const VirtualMemory api;
    return api;
  }
  void check(CUresult status, const char* call) const {
    if (status == CUDA_SUCCESS) return;
    const char* text = nullptr;
    error_string(status, &text);
    throw SystemError(std::string(call) + ": " + (text != nullptr ? text : "unknown CUDA driver error"));
  }
};

CUmemAllocationProp device_memory(int gpu) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = gpu;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

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
  int rank = 0;
  int ranks = 1;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(group, &rank));
  PLESHARD_MPI_CHECK(MPI_Comm_size(group, &ranks));
  const bool maker = rank == 0;
  // One GPU for the whole group: its rows are one allocation on it.
  const std::array<std::uint64_t, 2> mine = kernels::gpu_uuid();
  std::vector<std::array<std::uint64_t, 2>> all(static_cast<std::size_t>(ranks));
  watched_allgather(mine.data(), all.data(), 2, MPI_UINT64_T, group, what + ": the group's GPUs");
  if (bytes == 0) return;
  int fd = -1;
  try {
    collective_try(group, [&] {
      if (std::any_of(all.begin(), all.end(), [&](const auto& gpu) { return gpu != all.front(); }))
        throw InputError(what + ": the " + std::to_string(ranks) +
                         " ranks that read its rows in place use more than one GPU; peer reads map one GPU's "
                         "memory (reads between GPUs are not built yet: use --exchange owner)");
      const VirtualMemory& vm = VirtualMemory::get();
      int gpu = 0;
      PLESHARD_CUDA_CHECK(cudaFree(nullptr));  // the runtime's context current for the driver's calls
      PLESHARD_CUDA_CHECK(cudaGetDevice(&gpu));
      const CUmemAllocationProp prop = device_memory(gpu);
      std::size_t granularity = 0;
      vm.check(vm.granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
               "cuMemGetAllocationGranularity");
      size_ = (bytes + granularity - 1) / granularity * granularity;
      if (!maker) return;
      const CUresult made = vm.create(&handle_, size_, &prop, 0);
      if (made == CUDA_ERROR_OUT_OF_MEMORY)
        throw InputError(what + ": cannot allocate " + std::to_string(size_) + " bytes (" +
                         std::to_string(kernels::gpu_memory().free) + " bytes of GPU memory free)");
      vm.check(made, "cuMemCreate");
      held_ = true;
      vm.check(vm.export_fd(&fd, handle_, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), "cuMemExportToShareableHandle");
    });
    const int received = share_descriptor(group, fd, what);
    collective_try(group, [&] {
      const VirtualMemory& vm = VirtualMemory::get();
      if (!maker) {
        const CUresult imported =
            fault_plan().peer_map_failure
                ? CUDA_ERROR_INVALID_HANDLE
                : vm.import_fd(&handle_, reinterpret_cast<void*>(static_cast<std::intptr_t>(received)),
                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        ::close(received);
        if (imported != CUDA_SUCCESS) {
          const char* text = nullptr;
          vm.error_string(imported, &text);
          throw InputError(what + ": cannot map the rows of the group's first rank (" +
                           (text != nullptr ? text : "CUDA driver error") +
                           "): peer reads need the group's processes on one machine, in one container");
        }
        held_ = true;
      }
      int gpu = 0;
      PLESHARD_CUDA_CHECK(cudaGetDevice(&gpu));
      CUdeviceptr va = 0;
      vm.check(vm.reserve(&va, size_, 0, 0, 0), "cuMemAddressReserve");
      va_ = va;
      vm.check(vm.map(va_, size_, 0, handle_, 0), "cuMemMap");
      mapped_ = true;
      CUmemAccessDesc access{};
      access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      access.location.id = gpu;
      access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      vm.check(vm.set_access(va_, size_, &access, 1), "cuMemSetAccess");
    });
    if (maker) ::close(fd);
    data_ = reinterpret_cast<std::uint8_t*>(va_);
  } catch (...) {
    if (maker && fd >= 0) ::close(fd);
    release();
    throw;
  }
}

SharedDeviceRows::~SharedDeviceRows() { release(); }

void SharedDeviceRows::release() noexcept {
  // Each process its own mapping and handle; the memory goes with the last of them, so a rank
  // that ends first frees nothing another still reads.
  try {
    const VirtualMemory& vm = VirtualMemory::get();
    if (mapped_) vm.unmap(va_, size_);
    if (va_ != 0) vm.address_free(va_, size_);
    if (held_) vm.release(handle_);
  } catch (...) {  // a driver without the calls has mapped nothing
  }
  mapped_ = held_ = false;
  va_ = 0;
  data_ = nullptr;
}

}  // namespace pleshard
