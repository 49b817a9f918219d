#pragma once
// Row encoding (the inverse of row_decode.hpp), one copy for the host and CUDA: checkpoints
// are written with it on the host, and benchmark tables generated with it in GPU or pinned
// memory, byte for byte the same. Conventions (as ModelOpt-style quantizers do):
// - FP8: global scale = amax / 448; each value is x / global rounded to the nearest E4M3
//   (ties to even), saturating at +-448.
// - NVFP4: global scale = amax / (6 * 448); each block of 16 values gets the E4M3 scale
//   nearest to block_amax / (6 * global); values are x / (block_scale * global) rounded to
//   the nearest E2M1 (ties to even), saturating at +-6.
// - FP8-E8M0: no global scale; each block of 32 values gets the smallest power of two 2^e
//   with block_amax <= 448 * 2^e (DeepSeek's UE8M0 rounding of amax / 448 up to a power of
//   two; e clamped to [-127, 127]), stored as the byte e + 127; values are x * 2^-e (exact)
//   rounded to the nearest E4M3 (ties to even), saturating at +-448.
// - An all-zero table (amax = 0) gets global scale 1, and an all-zero FP8-E8M0 block scale
//   1 (the byte 127), so that decoding stays finite.
// Every operation is a single IEEE operation (no a * b + c), so fused multiply-adds cannot
// make the device's bytes differ from the host's.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/common/row_decode.hpp"

namespace pleshard::kernels {

// Nearest E4M3 code (ties to even, saturating at 448; NaN to NaN), by integer arithmetic on
// the float's bits: no libm calls, the same instructions on the host and the device.
PLESHARD_HD inline std::uint8_t encode_e4m3(float x) {
  const std::uint32_t b = bits_from_float(x);
  const std::uint8_t sign = (b >> 31) != 0 ? 0x80 : 0x00;
  const std::uint32_t a = b & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7F;
  if (a >= 0x43E00000u) return sign | 0x7E;  // >= 448 saturates: 0x7F is NaN, not 480
  if (a >= 0x3C800000u) {
    // 2^-6 <= |x| < 448: keep the float's exponent and three mantissa bits, rounding the
    // other 20 to nearest even; a carry moves up a binade, and the rebias (127 -> 7) is a
    // subtraction of 120 binades.
    return static_cast<std::uint8_t>(sign | (((a + 0x7FFFFu + ((a >> 20) & 1u)) >> 20) - (120u << 3)));
  }
  // Below 2^-6: subnormal steps of 2^-9, |x| / 2^-9 = mantissa >> (141 - exponent).
  const std::uint32_t exponent = a >> 23;
  if (exponent < 116) return sign;  // below 2^-11: under a quarter step, rounds to 0
  const std::uint32_t mantissa = (a & 0x7FFFFFu) | 0x800000u;
  const std::uint32_t shift = 141 - exponent;  // 21..25
  const std::uint32_t q = (mantissa + ((1u << (shift - 1)) - 1) + ((mantissa >> shift) & 1u)) >> shift;
  return static_cast<std::uint8_t>(sign | q);
}

// Nearest E2M1 nibble (ties to even, saturating at 6; NaN to 6). The code is the number of
// midpoints between 0, .5, 1, 1.5, 2, 3, 4, 6 below |x|, a midpoint itself counting toward
// the even code: comparisons summed, not branches, which random values would mispredict.
PLESHARD_HD inline std::uint8_t encode_e2m1(float x) {
  const std::uint8_t sign = (bits_from_float(x) >> 31) != 0 ? 0x8 : 0x0;
  const float m = fabsf(x);
  const int code = (m > 0.25f) + (m >= 0.75f) + (m > 1.25f) + (m >= 1.75f) + (m > 2.5f) + (m >= 3.5f) + (m > 5.0f);
  return static_cast<std::uint8_t>(sign | (m != m ? 7 : code));
}

PLESHARD_HD inline float fp8_global_scale(float amax) { return amax > 0 ? amax / 448.0f : 1.0f; }
PLESHARD_HD inline float nvfp4_global_scale(float amax) { return amax > 0 ? amax / (6.0f * 448.0f) : 1.0f; }

// The E8M0 scale byte of a block whose largest magnitude is `amax`: e + 127 for the smallest e
// with amax <= 448 * 2^e, from the float's bits. amax = m * 2^E with m in [1, 2) and 448 =
// 1.75 * 2^8, so e = E - 8, or E - 7 where m > 1.75 (mantissa bits past 0x600000).
PLESHARD_HD inline std::uint8_t encode_e8m0_scale(float amax) {
  const std::uint32_t a = bits_from_float(amax) & 0x7FFFFFFFu;
  if (a == 0 || a > 0x7F800000u) return 127;      // zero (or NaN): scale 1
  const auto biased = static_cast<int>(a >> 23);  // E + 127; 0 for subnormal amax, 255 for infinity
  if (biased == 0) return 0;                      // below 2^-126: 2^-127 holds it
  const int e = biased - 127 - 8 + ((a & 0x7FFFFFu) > 0x600000u ? 1 : 0);
  return static_cast<std::uint8_t>(e < -127 ? 0 : e + 127);  // e <= 120: never 255 (NaN)
}

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
    case RowFormat::fp8_e8m0:
      return;  // by blocks: encode_block
  }
}

// One NVFP4 block of 16 values: 8 bytes of codes (element 2i in the low nibble of byte i)
// and its E4M3 block scale.
PLESHARD_HD inline void encode_nvfp4_block(const float* block, float global_scale, std::uint8_t* codes,
                                           std::uint8_t* scale) {
  constexpr int n = block_scaling(RowFormat::nvfp4).block;
  float block_amax = 0;
  for (int i = 0; i < n; ++i) {
    const float m = fabsf(block[i]);
    block_amax = m > block_amax ? m : block_amax;  // NaN ignored, as fmaxf would (without a call)
  }
  *scale = encode_e4m3(block_amax / (6.0f * global_scale));
  const float block_scale = decode_e4m3(*scale) * global_scale;
  for (int i = 0; i < n; i += 2) {
    const std::uint8_t low = block_scale > 0 ? encode_e2m1(block[i] / block_scale) : 0;
    const std::uint8_t high = block_scale > 0 ? encode_e2m1(block[i + 1] / block_scale) : 0;
    codes[i / 2] = static_cast<std::uint8_t>(low | (high << 4));
  }
}

// One FP8-E8M0 block of 32 values: 32 E4M3 codes and its E8M0 block scale.
PLESHARD_HD inline void encode_fp8_e8m0_block(const float* block, std::uint8_t* codes, std::uint8_t* scale) {
  constexpr int n = block_scaling(RowFormat::fp8_e8m0).block;
  float block_amax = 0;
  for (int i = 0; i < n; ++i) {
    const float m = fabsf(block[i]);
    block_amax = m > block_amax ? m : block_amax;  // NaN ignored, as fmaxf would (without a call)
  }
  *scale = encode_e8m0_scale(block_amax);
  // 2^-e is the scale of byte 254 - s (both within [2^-127, 2^127]): a product by it is exact
  // wherever the result is a normal float, and below that E4M3 rounds to 0 either way.
  const float inverse = decode_e8m0(static_cast<std::uint8_t>(254 - *scale));
  for (int i = 0; i < n; ++i) codes[i] = encode_e4m3(block[i] * inverse);
}

// One block of a block-scaled format (block_scaling(format).block values): its codes and its
// scale byte.
PLESHARD_HD inline void encode_block(RowFormat format, const float* block, float global_scale, std::uint8_t* codes,
                                     std::uint8_t* scale) {
  if (format == RowFormat::nvfp4) {
    encode_nvfp4_block(block, global_scale, codes, scale);
  } else {
    encode_fp8_e8m0_block(block, codes, scale);
  }
}

// Encodes one row of head_dim values: stored_row_bytes bytes into `row`, and for a
// block-scaled format scale_row_bytes block scales into `scales`.
PLESHARD_HD inline void encode_row(RowFormat format, const float* values, int head_dim, float global_scale,
                                   std::uint8_t* row, std::uint8_t* scales) {
  if (const BlockScaling s = block_scaling(format); s.scaled()) {
    const std::size_t block_bytes = stored_row_bytes(format, s.block);
    for (int b = 0; b < head_dim / s.block; ++b)
      encode_block(format, values + b * s.block, global_scale, row + b * block_bytes, scales + b);
    return;
  }
  for (int j = 0; j < head_dim; ++j) encode_value(format, values[j], global_scale, row, j);
}

}  // namespace pleshard::kernels
