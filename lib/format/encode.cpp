#include "format/encode.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/common/row_decode.hpp"

namespace pleshard {

std::uint8_t encode_e4m3(float x) {
  if (std::isnan(x)) return 0x7F;
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const float m = std::fabs(x);
  if (m >= 448.0f) return sign | 0x7E;  // saturate: 0x7F is NaN, not 480
  if (m < 0.015625f) {                  // below 2^-6: subnormal steps of 2^-9 (nearbyint: half to even)
    return static_cast<std::uint8_t>(sign | static_cast<int>(std::nearbyint(std::ldexp(m, 9))));
  }
  int exponent = 0;
  std::frexp(m, &exponent);  // m = f * 2^exponent, f in [0.5, 1)
  exponent -= 1;             // m in [2^exponent, 2^(exponent+1)), exponent >= -6
  // Three mantissa bits: m * 2^(3 - exponent) is in [8, 16); a carry to 16 moves up a binade.
  const int q = static_cast<int>(std::nearbyint(std::ldexp(m, 3 - exponent)));
  const int code = ((exponent + 7) << 3) + (q - 8);
  return static_cast<std::uint8_t>(sign | std::min(code, 0x7E));
}

std::uint8_t encode_e2m1(float x) {
  const std::uint8_t sign = std::signbit(x) ? 0x8 : 0x0;
  const float m = std::fabs(x);
  // Midpoints between 0, .5, 1, 1.5, 2, 3, 4, 6; a value on a midpoint goes to the even code.
  std::uint8_t code;
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
  else
    code = 7;  // saturates at 6 (NaN too)
  return static_cast<std::uint8_t>(sign | code);
}

float fp8_global_scale(float amax) { return amax > 0 ? amax / 448.0f : 1.0f; }
float nvfp4_global_scale(float amax) { return amax > 0 ? amax / (6.0f * 448.0f) : 1.0f; }

void encode_row(RowFormat format, std::span<const float> values, float global_scale, std::span<std::uint8_t> row,
                std::span<std::uint8_t> scales) {
  const std::size_t n = values.size();
  switch (format) {
    case RowFormat::f32:
      std::memcpy(row.data(), values.data(), n * sizeof(float));
      return;
    case RowFormat::bf16:
    case RowFormat::f16:
      for (std::size_t j = 0; j < n; ++j) {
        const std::uint16_t h =
            format == RowFormat::bf16 ? kernels::encode_bf16(values[j]) : kernels::encode_f16(values[j]);
        std::memcpy(row.data() + 2 * j, &h, sizeof h);
      }
      return;
    case RowFormat::fp8:
      for (std::size_t j = 0; j < n; ++j) row[j] = encode_e4m3(values[j] / global_scale);
      return;
    case RowFormat::nvfp4:
      std::fill(row.begin(), row.end(), std::uint8_t{0});
      for (std::size_t b = 0; b < n / kernels::k_nvfp4_block; ++b) {
        const auto block = values.subspan(b * kernels::k_nvfp4_block, kernels::k_nvfp4_block);
        float block_amax = 0;
        for (float v : block) block_amax = std::max(block_amax, std::fabs(v));
        scales[b] = encode_e4m3(block_amax / (6.0f * global_scale));
        const float block_scale = kernels::decode_e4m3(scales[b]) * global_scale;
        for (std::size_t i = 0; i < block.size(); ++i) {
          const std::uint8_t code = block_scale > 0 ? encode_e2m1(block[i] / block_scale) : 0;
          const std::size_t j = b * kernels::k_nvfp4_block + i;
          row[j / 2] = static_cast<std::uint8_t>(row[j / 2] | (j % 2 == 0 ? code : code << 4));
        }
      }
      return;
  }
}

}  // namespace pleshard
