#include "store/device_rows.hpp"

#include <unistd.h>

#include <algorithm>
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
  [[nodiscard]] std::string text(CUresult status) const {
    const char* words = nullptr;
    error_string(status, &words);
    return words != nullptr ? words : "unknown CUDA driver error";
  }
  void check(CUresult status, const char* call) const {
    if (status != CUDA_SUCCESS) throw SystemError(std::string(call) + ": " + text(status));
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
  if (bytes == 0) return;
  const VirtualMemory* vm = nullptr;
  int gpu = 0;
  // Pages of the largest granularity among the group's GPUs (powers of two: a whole number
  // of pages of each).
  unsigned long long granularity = collective_try(group, [&] {
    vm = &VirtualMemory::get();
    PLESHARD_CUDA_CHECK(cudaFree(nullptr));  // the runtime's context current for the driver's calls
    PLESHARD_CUDA_CHECK(cudaGetDevice(&gpu));
    const CUmemAllocationProp prop = device_memory(gpu);
    std::size_t g = 0;
    vm->check(vm->granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), "cuMemGetAllocationGranularity");
    return static_cast<unsigned long long>(g);
  });
  watched_allreduce(&granularity, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, group, what + ": the group's page size");
  // Rank r's part: the r-th of `ranks` runs of whole pages, on its own GPU.
  const std::size_t pages = (bytes + granularity - 1) / granularity;
  const std::size_t per_rank = (pages + static_cast<std::size_t>(ranks) - 1) / static_cast<std::size_t>(ranks);
  size_ = pages * granularity;
  parts_.resize(static_cast<std::size_t>(ranks));
  for (std::size_t r = 0; r < parts_.size(); ++r) {
    const std::size_t first = std::min(pages, r * per_rank);
    parts_[r].offset = first * granularity;
    parts_[r].size = (std::min(pages, first + per_rank) - first) * granularity;
  }
  Part& mine = parts_[static_cast<std::size_t>(rank)];
  int fd = -1;
  std::vector<int> fds;
  try {
    collective_try(group, [&] {
      if (mine.size == 0) return;
      const CUmemAllocationProp prop = device_memory(gpu);
      const CUresult made = vm->create(&mine.handle, mine.size, &prop, 0);
      if (made == CUDA_ERROR_OUT_OF_MEMORY)
        throw InputError(what + ": cannot allocate " + std::to_string(mine.size) + " bytes (" +
                         std::to_string(kernels::gpu_memory().free) + " bytes of GPU memory free)");
      vm->check(made, "cuMemCreate");
      mine.held = true;
      vm->check(vm->export_fd(&fd, mine.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                "cuMemExportToShareableHandle");
    });
    fds = share_descriptors(group, fd, what);
    collective_try(group, [&] {
      for (std::size_t r = 0; r < parts_.size(); ++r) {
        Part& part = parts_[r];
        if (part.size == 0 || r == static_cast<std::size_t>(rank)) continue;
        const CUresult imported =
            fault_plan().peer_map_failure
                ? CUDA_ERROR_INVALID_HANDLE
                : vm->import_fd(&part.handle, reinterpret_cast<void*>(static_cast<std::intptr_t>(fds[r])),
                                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        if (imported != CUDA_SUCCESS)
          throw InputError(what + ": cannot map the rows of the group's rank " + std::to_string(r) + " (" +
                           vm->text(imported) +
                           "): peer reads need the group's processes on one machine, in one container");
        part.held = true;
      }
      CUdeviceptr va = 0;
      vm->check(vm->reserve(&va, size_, granularity, 0, 0), "cuMemAddressReserve");
      va_ = va;
      CUmemAccessDesc access{};
      access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      access.location.id = gpu;
      access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      for (std::size_t r = 0; r < parts_.size(); ++r) {
        Part& part = parts_[r];
        if (part.size == 0) continue;
        vm->check(vm->map(va_ + part.offset, part.size, 0, part.handle, 0), "cuMemMap");
        part.mapped = true;
        // Memory on another GPU reads over its peer link: where there is none, say so.
        const CUresult granted = vm->set_access(va_ + part.offset, part.size, &access, 1);
        if (granted != CUDA_SUCCESS)
          throw InputError(what + ": this rank's GPU cannot read the rows on the GPU of the group's rank " +
                           std::to_string(r) + " (" + vm->text(granted) +
                           "): peer reads need every GPU of the group to reach the others' memory (peer access)");
      }
    });
    for (const int d : fds)
      if (d >= 0) ::close(d);
    data_ = reinterpret_cast<std::uint8_t*>(va_);
  } catch (...) {
    if (fds.empty() && fd >= 0) ::close(fd);
    for (const int d : fds)
      if (d >= 0) ::close(d);
    release();
    throw;
  }
}

SharedDeviceRows::~SharedDeviceRows() { release(); }

void SharedDeviceRows::release() noexcept {
  // Each process its own mappings and handles; a part's memory goes with the last of them,
  // so a rank that ends first frees nothing another still reads.
  try {
    const VirtualMemory& vm = VirtualMemory::get();
    for (Part& part : parts_) {
      if (part.mapped) vm.unmap(va_ + part.offset, part.size);
      if (part.held) vm.release(part.handle);
      part.mapped = part.held = false;
    }
    if (va_ != 0) vm.address_free(va_, size_);
  } catch (...) {  // a driver without the calls has mapped nothing
  }
  va_ = 0;
  data_ = nullptr;
}

}  // namespace pleshard
