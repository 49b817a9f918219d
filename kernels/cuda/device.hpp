#pragma once
// Small CUDA runtime helpers: device discovery and an owning device buffer.

#include <cstddef>
#include <span>
#include <utility>

#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_check.hpp"

namespace pleshard::kernels {

// Number of usable CUDA devices; 0 when there is no device or no driver.
[[nodiscard]] int cuda_device_count();

// Owns `size` elements of device memory; move-only.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t size) : size_(size) {
    if (size_ != 0) PLESHARD_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), bytes()));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }

  [[nodiscard]] T* data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::size_t bytes() const { return size_ * sizeof(T); }

  void copy_from_host(std::span<const T> host, cudaStream_t stream = nullptr) {
    if (host.size() > size_) throw SystemError("DeviceBuffer: copy larger than the buffer");
    PLESHARD_CUDA_CHECK(cudaMemcpyAsync(data_, host.data(), host.size_bytes(), cudaMemcpyHostToDevice, stream));
  }
  void copy_to_host(std::span<T> host, cudaStream_t stream = nullptr) const {
    if (host.size() > size_) throw SystemError("DeviceBuffer: copy larger than the buffer");
    PLESHARD_CUDA_CHECK(cudaMemcpyAsync(host.data(), data_, host.size_bytes(), cudaMemcpyDeviceToHost, stream));
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace pleshard::kernels
