#include "kernels/cuda/device.hpp"

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

}  // namespace pleshard::kernels
