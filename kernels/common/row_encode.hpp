#pragma once
// Row encoding (the inverse of row_decode.hpp), one copy for the host and CUDA: checkpoints
// are written with it on the host, and benchmark tables generated with it in GPU or pinned
// memory, byte for byte the same. Conventions (as ModelOpt-style quantizers do):
// - FP8: global scale = amax / 448; each value is x / global rounded to the nearest E4M3
//   (ties to even), saturating at +-448.
// - NVFP4: global scale = amax / (6 * 448); each block of 16 values gets the E4M3 scale
//   nearest to block_amax / (6 * global); values are x / (block_scale * global) rounded to
//   the nearest E2M1 (ties to even), saturating at +-6.
// - An all-zero table (amax = 0) gets global scale 1 so that decoding stays finite.
// Every operation is a single IEEE operation (no a * b + c), so fused multiply-adds cannot
// make the device's bytes differ from the host's.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/common/row_decode.hpp"

namespace pleshard::kernels {

// Nearest E4M3 code (ties to even, saturating at 448; NaN to NaN).
PLESHARD_HD inline std::uint8_t encode_e4m3(float x) {
  if (x != x) return 0x7F;
  const std::uint8_t sign = (bits_from_float(x) >> 31) != 0 ? 0x80 : 0x00;
  const float m = fabsf(x);
  if (m >= 448.0f) return sign | 0x7E;  // saturate: 0x7F is NaN, not 480
  if (m < 0.015625f)                    // below 2^-6: subnormal steps of 2^-9 (rint: half to even)
    return static_cast<std::uint8_t>(sign | static_cast<int>(rintf(ldexpf(m, 9))));
  int exponent = 0;
  (void)frexpf(m, &exponent);  // m = f * 2^exponent, f in [0.5, 1)
  exponent -= 1;               // m in [2^exponent, 2^(exponent+1)), exponent >= -6
  // Three mantissa bits: m * 2^(3 - exponent) is in [8, 16); a carry to 16 moves up a binade.
  const int q = static_cast<int>(rintf(ldexpf(m, 3 - exponent)));
  const int code = ((exponent + 7) << 3) + (q - 8);
  return static_cast<std::uint8_t>(sign | (code < 0x7E ? code : 0x7E));
}

// Nearest E2M1 nibble (ties to even, saturating at 6).
PLESHARD_HD inline std::uint8_t encode_e2m1(float x) {
  const std::uint8_t sign = (bits_from_float(x) >> 31) != 0 ? 0x8 : 0x0;
  const float m = fabsf(x);
  // Midpoints between 0, .5, 1, 1.5, 2, 3, 4, 6; a value on a midpoint goes to the even code.
  std::uint8_t code = 7;  // saturates at 6 (NaN too)
  if (m <= 0.25f)
    code = 0;
  else if (m < 0.75f)
    code = 1;
  else if (m <= 1.25f)
    code = 2;
  else if (m < 1.75f)
    code = 3;
  else if (m <= 2.5f)
    code = 4;
  else if (m < 3.5f)
    code = 5;
  else if (m <= 5.0f)
    code = 6;
  return static_cast<std::uint8_t>(sign | code);
}

PLESHARD_HD inline float fp8_global_scale(float amax) { return amax > 0 ? amax / 448.0f : 1.0f; }
PLESHARD_HD inline float nvfp4_global_scale(float amax) { return amax > 0 ? amax / (6.0f * 448.0f) : 1.0f; }

// Value j of a row of a 16-, 32-bit or FP8 format, encoded into `row`.
PLESHARD_HD inline void encode_value(RowFormat format, float v, float global_scale, std::uint8_t* row, int j) {
  switch (format) {
    case RowFormat::f32:
      std::memcpy(row + 4 * j, &v, sizeof v);
      return;
    case RowFormat::bf16:
    case RowFormat::f16: {
      const std::uint16_t h = format == RowFormat::bf16 ? encode_bf16(v) : encode_f16(v);
      std::memcpy(row + 2 * j, &h, sizeof h);
      return;
    }
    case RowFormat::fp8:
      row[j] = encode_e4m3(v / global_scale);
      return;
    case RowFormat::nvfp4:
      return;  // by blocks: encode_nvfp4_block
  }
}

// One NVFP4 block of 16 values: 8 bytes of codes (element 2i in the low nibble of byte i)
// and its E4M3 block scale.
PLESHARD_HD inline void encode_nvfp4_block(const float* block, float global_scale, std::uint8_t* codes,
                                           std::uint8_t* scale) {
  float block_amax = 0;
  for (int i = 0; i < k_nvfp4_block; ++i) block_amax = fmaxf(block_amax, fabsf(block[i]));
  *scale = encode_e4m3(block_amax / (6.0f * global_scale));
  const float block_scale = decode_e4m3(*scale) * global_scale;
  for (int i = 0; i < k_nvfp4_block; i += 2) {
    const std::uint8_t low = block_scale > 0 ? encode_e2m1(block[i] / block_scale) : 0;
    const std::uint8_t high = block_scale > 0 ? encode_e2m1(block[i + 1] / block_scale) : 0;
    codes[i / 2] = static_cast<std::uint8_t>(low | (high << 4));
  }
}

// Encodes one row of head_dim values: stored_row_bytes bytes into `row`, and for nvfp4
// scale_row_bytes block scales into `scales`.
PLESHARD_HD inline void encode_row(RowFormat format, const float* values, int head_dim, float global_scale,
                                   std::uint8_t* row, std::uint8_t* scales) {
  if (format == RowFormat::nvfp4) {
    for (int b = 0; b < head_dim / k_nvfp4_block; ++b)
      encode_nvfp4_block(values + b * k_nvfp4_block, global_scale, row + b * k_nvfp4_block / 2, scales + b);
    return;
  }
  for (int j = 0; j < head_dim; ++j) encode_value(format, values[j], global_scale, row, j);
}

}  // namespace pleshard::kernels
