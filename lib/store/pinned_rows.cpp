#include "store/pinned_rows.hpp"

#include <algorithm>
#include <utility>

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
  // On 2 MiB pages where the machine offers them, asked for before the first byte is written
  // or locked (a locked page is never merged into a huge one afterwards): the rows' first
  // byte lies `skew` into the first of them, which starts the mapping.
  own_ = HostBytes(mapping_bytes(bytes, skew), what_);
  base_ = own_.data();
  mapped_ = own_.size();
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
  for (std::uint8_t* piece : pieces_) cudaHostUnregister(piece);  // then own_, or the segment, unmaps the rows
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
