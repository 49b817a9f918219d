#pragma once
// f16 rows: head_dim IEEE halves, rounded to nearest even, overflowing to infinity.

#include "kernels/common/format_traits.hpp"
#include "kernels/common/scalar_codes.hpp"

namespace pleshard::kernels {

struct F16Format {
  static constexpr RowFormat id = RowFormat::f16;
  static constexpr const char* name = "f16";
  static constexpr const char* aliases[] = {"float16", "F16"};
  static constexpr ElementCode element = ElementCode::f16;
  static constexpr BlockScaling scaling{};
  static constexpr bool global_scale = false;
  static constexpr const char* safetensors_dtype = "F16";
  static constexpr const char* config_quantizations[] = {"none", "fp8_e8m0"};
  static constexpr const char* default_for = nullptr;

  PLESHARD_HD static constexpr std::size_t row_bytes(int head_dim) { return 2u * static_cast<std::size_t>(head_dim); }

  template <typename E4m3>
  PLESHARD_HD static float decode(const std::uint8_t* row, const std::uint8_t*, float, int j, E4m3) {
    return decode_f16(code16_at(row, j));
  }
  PLESHARD_HD static float global_scale_for(float) { return 1.0f; }
  PLESHARD_HD static void encode_value(float v, float, std::uint8_t* row, int j) { set_code16(row, j, encode_f16(v)); }

  static constexpr std::size_t code_bytes = 2;
  static bool nan_code(const std::uint8_t* code) { return (code16_at(code, 0) & 0x7FFF) > 0x7C00; }
};

}  // namespace pleshard::kernels
