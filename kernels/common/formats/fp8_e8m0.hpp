#pragma once
// fp8_e8m0 rows (MXFP8's layout; DeepSeek-V4.1's Engram tables): head_dim E4M3 codes with
// head_dim/32 E8M0 block scales in a plane of their own, no global scale. Encoding: each
// block of 32 values gets the smallest power of two 2^e with block_amax <= 448 * 2^e
// (DeepSeek's UE8M0 rounding of amax / 448 up to a power of two; e clamped to [-127, 127]),
// stored as the byte e + 127; values are x * 2^-e (exact) rounded to the nearest E4M3 (ties
// to even), saturating at +-448; an all-zero block gets scale 1 (the byte 127).

#include <cmath>

#include "kernels/common/format_traits.hpp"
#include "kernels/common/scalar_codes.hpp"

namespace pleshard::kernels {

struct Fp8E8m0Format {
  static constexpr RowFormat id = RowFormat::fp8_e8m0;
  static constexpr const char* name = "fp8_e8m0";
  static constexpr const char* aliases[] = {"fp8-e8m0", "mxfp8", "MXFP8"};
  static constexpr ElementCode element = ElementCode::e4m3;
  static constexpr BlockScaling scaling{32, ScaleCode::e8m0};
  static constexpr bool global_scale = false;
  static constexpr const char* safetensors_dtype = "F8_E4M3";
  static constexpr const char* config_quantizations[] = {"float8_e4m3fn", "fp8_e8m0"};
  static constexpr const char* default_for = "fp8_e8m0";

  PLESHARD_HD static constexpr std::size_t row_bytes(int head_dim) { return static_cast<std::size_t>(head_dim); }

  template <typename E4m3>
  PLESHARD_HD static float block_element(const std::uint8_t* row, int j, E4m3 e4m3) {
    return e4m3(row[j]);
  }
  PLESHARD_HD static float global_scale_for(float) { return 1.0f; }

  // One block of 32 values: 32 E4M3 codes and its E8M0 block scale.
  PLESHARD_HD static void encode_block(const float* block, float, std::uint8_t* codes, std::uint8_t* scale) {
    constexpr int n = scaling.block;
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

  static constexpr std::size_t code_bytes = 1;
  static bool nan_code(const std::uint8_t* code) { return (*code & 0x7F) == 0x7F; }
};

}  // namespace pleshard::kernels
