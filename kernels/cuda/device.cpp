#include "kernels/cuda/device.hpp"

#include <cstring>

namespace pleshard::kernels {

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" / "no driver" error
    return 0;
  }
  return count;
}

DeviceMemory device_memory() {
  DeviceMemory m;
  PLESHARD_CUDA_CHECK(cudaMemGetInfo(&m.free, &m.total));
  return m;
}

std::array<std::uint64_t, 2> device_uuid() {
  int device = 0;
  PLESHARD_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  PLESHARD_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::array<std::uint64_t, 2> words{};
  static_assert(sizeof prop.uuid.bytes == sizeof words);
  std::memcpy(words.data(), prop.uuid.bytes, sizeof words);
  return words;
}

int multiprocessors() {
  int device = 0;
  int sms = 0;
  PLESHARD_CUDA_CHECK(cudaGetDevice(&device));
  PLESHARD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

}  // namespace pleshard::kernels
