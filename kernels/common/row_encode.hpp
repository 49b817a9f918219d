#pragma once
// Row encoding (the inverse of row_decode.hpp), one copy for the host and CUDA: checkpoints
// are written with it on the host, and benchmark tables generated with it in GPU or pinned
// memory, byte for byte the same. Each format's conventions are its traits'
// (kernels/common/formats/); a registered format encodes through its hooks, on the host.
// Every operation is a single IEEE operation (no a * b + c), so fused multiply-adds cannot
// make the device's bytes differ from the host's.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/common/row_decode.hpp"

namespace pleshard::kernels {

// The global scale a table of `format` whose largest magnitude is `amax` is encoded with (1
// for formats without one).
PLESHARD_HD inline float global_scale_for(RowFormat format, float amax) {
  return format_property<float>(
      format, [amax](auto f) { return decltype(f)::global_scale_for(amax); },
      [amax](const RowFormatHooks& h) { return h.global_scale_for(amax); });
}

// Value j of a row of a built-in format without block scales, encoded into `row`.
PLESHARD_HD inline void encode_value(RowFormat format, float v, float global_scale, std::uint8_t* row, int j) {
  visit_format(format, [&](auto f) {
    if constexpr (!decltype(f)::scaling.scaled()) decltype(f)::encode_value(v, global_scale, row, j);
  });
}

// One block of a built-in block-scaled format (block_scaling(format).block values): its codes
// and its scale byte.
PLESHARD_HD inline void encode_block(RowFormat format, const float* block, float global_scale, std::uint8_t* codes,
                                     std::uint8_t* scale) {
  visit_format(format, [&](auto f) {
    if constexpr (decltype(f)::scaling.scaled()) decltype(f)::encode_block(block, global_scale, codes, scale);
  });
}

// Encodes one row of head_dim values: stored_row_bytes bytes into `row`, and for a
// block-scaled format scale_row_bytes block scales into `scales`.
PLESHARD_HD inline void encode_row(RowFormat format, const float* values, int head_dim, float global_scale,
                                   std::uint8_t* row, std::uint8_t* scales) {
  if (registered_format(format)) {
#ifndef __CUDA_ARCH__
    registered_format_hooks(format).encode_row(values, head_dim, global_scale, row, scales);
#endif
    return;
  }
  if (const BlockScaling s = block_scaling(format); s.scaled()) {
    const std::size_t block_bytes = stored_row_bytes(format, s.block);
    for (int b = 0; b < head_dim / s.block; ++b)
      encode_block(format, values + b * s.block, global_scale, row + b * block_bytes, scales + b);
    return;
  }
  for (int j = 0; j < head_dim; ++j) encode_value(format, values[j], global_scale, row, j);
}

}  // namespace pleshard::kernels
