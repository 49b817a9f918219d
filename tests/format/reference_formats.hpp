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

inline double e2m1_value(std::uint8_t nibble) {
  static const double table[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};  // docs/design.md §3
  return (nibble & 8) != 0 ? -table[nibble & 7] : table[nibble & 7];
}

}  // namespace pleshard::reference
