#pragma once
// Reference decoders written from the format definitions with double arithmetic and
// ldexp, sharing no code with kernels/common/row_decode.hpp.

#include <cmath>
#include <cstdint>
#include <limits>

namespace pleshard::reference {

inline double e4m3_value(std::uint8_t code) {
  const int sign = code >> 7;
  const int exponent = (code >> 3) & 0xF;
  const int mantissa = code & 0x7;
  if (exponent == 0xF && mantissa == 0x7) return std::numeric_limits<double>::quiet_NaN();
  const double magnitude =
      exponent == 0 ? std::ldexp(mantissa / 8.0, -6) : std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
  return sign != 0 ? -magnitude : magnitude;
}

// UE8M0: 2^(s - 127); 255 is NaN.
inline double e8m0_value(std::uint8_t s) {
  return s == 255 ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, s - 127);
}

// An FP8-E8M0 value, e4m3(code) * 2^(scale - 127), as float32: the product of a 4-bit
// significand and a power of two is exact in double, and exact in float too down to 2^-136
// (a float32 subnormal); from 2^128 up it is infinity.
inline float fp8_e8m0_value(std::uint8_t code, std::uint8_t scale) {
  const double v = e4m3_value(code) * e8m0_value(scale);
  if (std::fabs(v) >= std::ldexp(1.0, 128))
    return v < 0 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  return static_cast<float>(v);
}

inline double e2m1_value(std::uint8_t nibble) {
  static const double table[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};  // docs/design.md §3
  return (nibble & 8) != 0 ? -table[nibble & 7] : table[nibble & 7];
}

}  // namespace pleshard::reference
