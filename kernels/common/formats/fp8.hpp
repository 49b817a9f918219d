#pragma once
// fp8 rows: head_dim E4M3 codes and one float32 global scale per table. Encoding (as
// ModelOpt-style quantizers do): global scale = amax / 448; each value is x / global rounded
// to the nearest E4M3 (ties to even), saturating at +-448; an all-zero table gets scale 1.

#include "kernels/common/format_traits.hpp"
#include "kernels/common/scalar_codes.hpp"

namespace pleshard::kernels {

struct Fp8Format {
  static constexpr RowFormat id = RowFormat::fp8;
  static constexpr const char* name = "fp8";
  static constexpr const char* aliases[] = {"float8_e4m3fn", "F8_E4M3"};
  static constexpr ElementCode element = ElementCode::e4m3;
  static constexpr BlockScaling scaling{};
  static constexpr bool global_scale = true;
  static constexpr const char* safetensors_dtype = "F8_E4M3";
  static constexpr const char* config_quantizations[] = {"float8_e4m3fn"};
  static constexpr const char* default_for = "float8_e4m3fn";

  PLESHARD_HD static constexpr std::size_t row_bytes(int head_dim) { return static_cast<std::size_t>(head_dim); }

  template <typename E4m3>
  PLESHARD_HD static float decode(const std::uint8_t* row, const std::uint8_t*, float global_scale, int j, E4m3 e4m3) {
    return e4m3(row[j]) * global_scale;
  }
  PLESHARD_HD static float global_scale_for(float amax) { return amax > 0 ? amax / 448.0f : 1.0f; }
  PLESHARD_HD static void encode_value(float v, float global_scale, std::uint8_t* row, int j) {
    row[j] = encode_e4m3(v / global_scale);
  }

  static constexpr std::size_t code_bytes = 1;
  static bool nan_code(const std::uint8_t* code) { return (*code & 0x7F) == 0x7F; }
};

}  // namespace pleshard::kernels
