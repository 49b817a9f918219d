#include "kernels/cuda/synthetic_cuda.hpp"

#include <algorithm>

#include "kernels/common/synthetic_rows.hpp"
#include "kernels/cuda/cuda_check.hpp"

namespace pleshard::kernels {

namespace {

__global__ void make_rows(SyntheticTarget t) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < t.count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    synthetic_row(t.format, t.head_dim, t.seed, t.ple_index, t.first_row + i,
                  t.rows + static_cast<std::size_t>(i) * t.pitch,
                  t.scales + static_cast<std::size_t>(i) * t.scale_pitch);
  }
}

}  // namespace

void make_synthetic_rows_cuda(const SyntheticTarget& target, cudaStream_t stream) {
  if (target.count <= 0) return;
  constexpr int k_threads = 256;
  const auto blocks = static_cast<int>(std::min<std::int64_t>((target.count + k_threads - 1) / k_threads, 1 << 20));
  make_rows<<<blocks, k_threads, 0, stream>>>(target);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

}  // namespace pleshard::kernels
