#pragma once
// bf16 rows: head_dim bfloat16 values (float32's upper halves), rounded to nearest even.

#include "kernels/common/format_traits.hpp"
#include "kernels/common/scalar_codes.hpp"

namespace pleshard::kernels {

struct Bf16Format {
  static constexpr RowFormat id = RowFormat::bf16;
  static constexpr const char* name = "bf16";
  static constexpr const char* aliases[] = {"bfloat16", "BF16"};
  static constexpr ElementCode element = ElementCode::bf16;
  static constexpr BlockScaling scaling{};
  static constexpr bool global_scale = false;
  static constexpr const char* safetensors_dtype = "BF16";
  static constexpr const char* config_quantizations[] = {"none", "fp8_e8m0"};
  static constexpr const char* default_for = "none";

  PLESHARD_HD static constexpr std::size_t row_bytes(int head_dim) { return 2u * static_cast<std::size_t>(head_dim); }

  template <typename E4m3>
  PLESHARD_HD static float decode(const std::uint8_t* row, const std::uint8_t*, float, int j, E4m3) {
    return decode_bf16(code16_at(row, j));
  }
  PLESHARD_HD static float global_scale_for(float) { return 1.0f; }
  PLESHARD_HD static void encode_value(float v, float, std::uint8_t* row, int j) { set_code16(row, j, encode_bf16(v)); }

  static constexpr std::size_t code_bytes = 2;
  static bool nan_code(const std::uint8_t* code) { return (code16_at(code, 0) & 0x7FFF) > 0x7F80; }
};

}  // namespace pleshard::kernels
