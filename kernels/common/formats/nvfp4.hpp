#pragma once
// nvfp4 rows: head_dim/2 bytes of E2M1 pairs (element 2i in the low nibble of byte i), with
// head_dim/16 E4M3 block scales in a plane of their own and one float32 global scale per
// table. Encoding (as ModelOpt-style quantizers do): global scale = amax / (6 * 448); each
// block of 16 values gets the E4M3 scale nearest to block_amax / (6 * global); values are
// x / (block_scale * global) rounded to the nearest E2M1 (ties to even), saturating at +-6;
// an all-zero table gets global scale 1.

#include <cmath>

#include "kernels/common/format_traits.hpp"
#include "kernels/common/scalar_codes.hpp"

namespace pleshard::kernels {

struct Nvfp4Format {
  static constexpr RowFormat id = RowFormat::nvfp4;
  static constexpr const char* name = "nvfp4";
  static constexpr const char* aliases[] = {"NVFP4"};
  static constexpr ElementCode element = ElementCode::e2m1;
  static constexpr BlockScaling scaling{16, ScaleCode::e4m3};
  static constexpr bool global_scale = true;
  static constexpr const char* safetensors_dtype = "U8";
  static constexpr const char* config_quantizations[] = {"nvfp4"};
  static constexpr const char* default_for = "nvfp4";

  PLESHARD_HD static constexpr std::size_t row_bytes(int head_dim) { return static_cast<std::size_t>(head_dim) / 2; }

  // Code j of a row, before its scales.
  template <typename E4m3>
  PLESHARD_HD static float block_element(const std::uint8_t* row, int j, E4m3) {
    const std::uint8_t pair = row[j / 2];
    return decode_e2m1((j & 1) != 0 ? pair >> 4 : pair & 0xFu);
  }
  PLESHARD_HD static float global_scale_for(float amax) { return amax > 0 ? amax / (6.0f * 448.0f) : 1.0f; }

  // One block of 16 values: 8 bytes of codes and its E4M3 block scale.
  PLESHARD_HD static void encode_block(const float* block, float global_scale, std::uint8_t* codes,
                                       std::uint8_t* scale) {
    constexpr int n = scaling.block;
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

  static constexpr std::size_t code_bytes = 1;
  static bool nan_code(const std::uint8_t*) { return false; }  // E2M1 has no NaN
};

}  // namespace pleshard::kernels
