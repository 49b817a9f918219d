#include "shard.hpp"

namespace {

__global__ void checksum_kernel(const std::uint16_t* values, std::int64_t count, unsigned long long* out) {
  unsigned long long sum = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    sum += static_cast<unsigned long long>(i + 1) * values[i];
  atomicAdd(out, sum);
}

}  // namespace

void checksum_on_device(const std::uint16_t* values, std::int64_t count, std::uint64_t* out, cudaStream_t stream) {
  cudaMemsetAsync(out, 0, sizeof(std::uint64_t), stream);
  checksum_kernel<<<64, 256, 0, stream>>>(values, count, reinterpret_cast<unsigned long long*>(out));
}
