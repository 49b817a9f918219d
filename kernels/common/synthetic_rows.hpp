#pragma once
// Synthetic table values as a function of (seed, PLE index, row, column) alone, one copy for
// the host and CUDA: a table generated on the host (checkpoints), in host memory or in GPU
// memory (benchmarks at any size, no file) holds the same bytes.

#include <cstdint>
#include <vector>

#include "kernels/common/ngram_hash.hpp"
#include "kernels/common/row_encode.hpp"

namespace pleshard::kernels {

// Values lie in (-k_synthetic_amax, k_synthetic_amax]: a sum of four uniforms, roughly
// Gaussian with standard deviation 0.0115. The bound stands in for the table's amax when
// choosing FP8/NVFP4 global scales, so tables are written in one pass (block scales are each
// block's own).
inline constexpr float k_synthetic_amax = 0.04f;

PLESHARD_HD constexpr std::uint64_t synthetic_row_key(std::uint64_t seed, int ple_index, std::int64_t row) {
  return splitmix64(splitmix64(seed ^ (static_cast<std::uint64_t>(ple_index) << 48)) + static_cast<std::uint64_t>(row));
}

PLESHARD_HD inline float synthetic_value_of(std::uint64_t key, int column) {
  const std::uint64_t bits = splitmix64(key + static_cast<std::uint64_t>(column));
  const auto sum =
      static_cast<float>((bits & 0xFFFF) + ((bits >> 16) & 0xFFFF) + ((bits >> 32) & 0xFFFF) + (bits >> 48));
  // sum / 65536 is in [0, 4) and exact; centred and scaled into (-amax, amax].
  return (2.0f - sum * (1.0f / 65536.0f)) * (k_synthetic_amax / 2.0f);
}

// The global scale synthetic tables of `format` are stored with.
PLESHARD_HD inline float synthetic_global_scale(RowFormat format) { return global_scale_for(format, k_synthetic_amax); }

// Row `row` of table `ple_index`, encoded into `out` and (block-scaled formats) `scales`,
// one value (or one block) at a time: no scratch the size of a row.
PLESHARD_HD inline void synthetic_row(RowFormat format, int head_dim, std::uint64_t seed, int ple_index,
                                      std::int64_t row, std::uint8_t* out, std::uint8_t* scales) {
  const std::uint64_t key = synthetic_row_key(seed, ple_index, row);
  const float global = synthetic_global_scale(format);
  if (registered_format(format)) {  // through its hooks, a row at a time (on the host alone)
#ifndef __CUDA_ARCH__
    std::vector<float> values(static_cast<std::size_t>(head_dim));
    for (int j = 0; j < head_dim; ++j) values[static_cast<std::size_t>(j)] = synthetic_value_of(key, j);
    encode_row(format, values.data(), head_dim, global, out, scales);
#endif
    return;
  }
  if (const BlockScaling s = block_scaling(format); s.scaled()) {
    float block[k_max_scale_block];
    const std::size_t block_bytes = stored_row_bytes(format, s.block);
    for (int b = 0; b < head_dim / s.block; ++b) {
      for (int i = 0; i < s.block; ++i) block[i] = synthetic_value_of(key, b * s.block + i);
      encode_block(format, block, global, out + b * block_bytes, scales + b);
    }
    return;
  }
  for (int j = 0; j < head_dim; ++j) encode_value(format, synthetic_value_of(key, j), global, out, j);
}

}  // namespace pleshard::kernels
