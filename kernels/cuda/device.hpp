#pragma once
// Small CUDA runtime helpers: device discovery, owning device and pinned buffers, and an
// owned stream.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_check.hpp"

namespace pleshard::kernels {

// Number of usable CUDA devices; 0 when there is no device or no driver.
[[nodiscard]] int cuda_device_count();

// Its memory and UUID, in every build: kernels/gpu_device.hpp.

// The current device's streaming multiprocessors: how many blocks fill it.
[[nodiscard]] int multiprocessors();

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

// Owns `bytes` of page-locked host memory (staging for copies at full PCIe speed); move-only.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes_ != 0) PLESHARD_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&data_), bytes_, cudaHostAllocDefault));
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  ~PinnedBuffer() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }

  [[nodiscard]] std::uint8_t* data() const { return data_; }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// A non-blocking stream of its own, destroyed (after its work) with the object.
class OwnedStream {
 public:
  OwnedStream() { PLESHARD_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  ~OwnedStream() {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  [[nodiscard]] cudaStream_t get() const { return stream_; }
  void synchronize() const { PLESHARD_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace pleshard::kernels
