#include "store/pinned_rows.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "core/error.hpp"
#include "core/host_memory.hpp"
#include "kernels/cuda/cuda_check.hpp"

namespace pleshard {

namespace {

std::size_t page_bytes() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

}  // namespace

PinnedRows::PinnedRows(std::size_t bytes, std::size_t skew, std::string what) : what_(std::move(what)), bytes_(bytes) {
  if (bytes == 0) return;
  skew %= page_bytes();
  mapped_ = mapping_bytes(bytes, skew);
  void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw InputError(what_ + ": cannot map " + std::to_string(mapped_) + " bytes of host memory: " +
                     std::strerror(errno) + " (" + std::to_string(available_host_bytes()) + " available)");
  base_ = static_cast<std::uint8_t*>(p);
  data_ = base_ + skew;
}

std::size_t PinnedRows::mapping_bytes(std::size_t bytes, std::size_t skew) {
  const std::size_t page = page_bytes();
  return (skew % page + bytes + page - 1) / page * page;
}

PinnedRows::PinnedRows(std::shared_ptr<const NodeSegment> segment, std::size_t bytes, std::size_t skew,
                       std::string what)
    : what_(std::move(what)), segment_(std::move(segment)), bytes_(bytes) {
  skew %= page_bytes();
  if (segment_->size() != mapping_bytes(bytes, skew))
    throw SystemError(what_ + ": a shared segment of " + std::to_string(segment_->size()) + " bytes for " +
                      std::to_string(bytes) + " bytes of rows from byte " + std::to_string(skew));
  if (bytes == 0) return;
  base_ = segment_->data();  // a mapping starts on a page
  mapped_ = segment_->size();
  data_ = base_ + skew;
}

PinnedRows::~PinnedRows() {
  for (std::uint8_t* piece : pieces_) cudaHostUnregister(piece);
  if (base_ != nullptr && !segment_) ::munmap(base_, mapped_);  // a shared segment unmaps itself
}

void PinnedRows::lock_through(std::size_t end) {
  if (base_ == nullptr) return;
  const std::size_t page = page_bytes();
  const auto from_base = static_cast<std::size_t>(data_ - base_) + std::min(end, bytes_);
  const std::size_t until = end >= bytes_ ? mapped_ : from_base / page * page;
  if (until <= locked_) return;
  std::uint8_t* start = base_ + locked_;
  const std::size_t n = until - locked_;
  const cudaError_t status = cudaHostRegister(start, n, cudaHostRegisterMapped | cudaHostRegisterPortable);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it
    throw InputError(what_ + ": cannot page-lock " + std::to_string(n) + " more bytes after " +
                     std::to_string(locked_) + " (" + std::to_string(available_host_bytes()) +
                     " bytes of host memory available; see ulimit -l)");
  }
  PLESHARD_CUDA_CHECK(status);
  pieces_.push_back(start);
  locked_ = until;
  // The kernels read the rows at their host addresses: each piece must map to the same
  // device address (true wherever the device can use host pointers for registered memory).
  void* device = nullptr;
  PLESHARD_CUDA_CHECK(cudaHostGetDevicePointer(&device, start, 0));
  if (device != start)
    throw SystemError(what_ + ": registered host memory has a device address other than its own on this system");
}

}  // namespace pleshard
