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

int multiprocessors() {
  int device = 0;
  int sms = 0;
  PLESHARD_CUDA_CHECK(cudaGetDevice(&device));
  PLESHARD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

}  // namespace pleshard::kernels
