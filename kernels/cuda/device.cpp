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

}  // namespace pleshard::kernels
