#pragma once
// The element codes rows are made of (bfloat16, IEEE half, E4M3, E8M0, E2M1): their bits to
// float32 and back, one copy for the host and CUDA. Every operation is a single IEEE operation
// or integer arithmetic on the bits (no libm calls, no a * b + c), so the device's bytes and
// values are the host's.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/common/host_device.hpp"

namespace pleshard::kernels {

PLESHARD_HD inline float float_from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

PLESHARD_HD inline std::uint32_t bits_from_float(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// Word j of a row of 16-bit codes (bf16, f16), and its store.
PLESHARD_HD inline std::uint16_t code16_at(const std::uint8_t* row, int j) {
  std::uint16_t h;
  std::memcpy(&h, row + 2 * j, sizeof h);
  return h;
}

PLESHARD_HD inline void set_code16(std::uint8_t* row, int j, std::uint16_t h) {
  std::memcpy(row + 2 * j, &h, sizeof h);
}

PLESHARD_HD inline float decode_bf16(std::uint16_t h) { return float_from_bits(static_cast<std::uint32_t>(h) << 16); }

PLESHARD_HD inline float decode_f16(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  const std::uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 31) return float_from_bits(sign | 0x7F800000u | (mantissa << 13));
  return float_from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// E4M3 "fn": bias 7, no infinities, S.1111.111 is NaN, max 448.
PLESHARD_HD inline float decode_e4m3(std::uint8_t b) {
  const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x80u) << 24;
  const std::uint32_t exponent = (b >> 3) & 0xFu;
  const std::uint32_t mantissa = b & 0x7u;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-9
    const float magnitude = static_cast<float>(mantissa) * 0.001953125f;
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 15 && mantissa == 7) return float_from_bits(sign | 0x7FC00000u);
  return float_from_bits(sign | ((exponent + 120) << 23) | (mantissa << 20));
}

// E8M0 (UE8M0): 2^(s - 127), no sign and no mantissa; 255 is NaN. Built from the float's
// bits: s >= 1 is the exponent field itself, and s = 0, 2^-127, is the float32 subnormal
// 0x00400000 (kept, never flushed: the decode multiplies by it exactly).
PLESHARD_HD inline float decode_e8m0(std::uint8_t s) {
  const std::uint32_t bits = s == 0 ? 0x00400000u : s == 255 ? 0x7FC00000u : static_cast<std::uint32_t>(s) << 23;
  return float_from_bits(bits);
}

// E2M1: codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6; bit 3 is the sign.
// Twice the magnitudes (0, 1, 2, 3, 4, 6, 8, 12) packed in one word: an indexed array would
// live in a GPU thread's local memory, a load per value.
PLESHARD_HD inline float decode_e2m1(std::uint8_t nibble) {
  const std::uint32_t twice = (0xC8643210u >> ((nibble & 0x7u) * 4)) & 0xFu;
  const float m = static_cast<float>(twice) * 0.5f;
  return (nibble & 0x8u) != 0 ? -m : m;
}

// float -> bfloat16, round to nearest even; NaN stays a (quiet) NaN.
PLESHARD_HD inline std::uint16_t encode_bf16(float f) {
  const std::uint32_t bits = bits_from_float(f);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// float -> IEEE half, round to nearest even, overflow to infinity.
PLESHARD_HD inline std::uint16_t encode_f16(float f) {
  std::uint32_t bits = bits_from_float(f);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  bits &= 0x7FFFFFFFu;
  if (bits >= 0x7F800000u)  // infinity or NaN
    return static_cast<std::uint16_t>(sign | (bits > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (bits < 0x38800000u) {                                           // below 2^-14: a half subnormal or zero
    if (bits < 0x33000000u) return static_cast<std::uint16_t>(sign);  // <= 2^-25 rounds to 0
    const std::uint32_t exponent = bits >> 23;
    const std::uint32_t mantissa = (bits & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126 - exponent;  // value / 2^-24 = mantissa >> shift
    std::uint32_t h = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1u) != 0)) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = (bits >> 13) - (112u << 10);
  const std::uint32_t rest = bits & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0)) ++h;
  return static_cast<std::uint16_t>(sign | (h < 0x7C00u ? h : 0x7C00u));
}

// E4M3 decoding as a callable, so a kernel can substitute a table filled by decode_e4m3.
struct DecodeE4m3 {
  PLESHARD_HD float operator()(std::uint8_t b) const { return decode_e4m3(b); }
};

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

}  // namespace pleshard::kernels
