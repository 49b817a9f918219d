#pragma once
// f32 rows: head_dim IEEE floats, stored as they are.

#include <cstring>

#include "kernels/common/format_traits.hpp"
#include "kernels/common/scalar_codes.hpp"

namespace pleshard::kernels {

struct F32Format {
  static constexpr RowFormat id = RowFormat::f32;
  static constexpr const char* name = "f32";
  static constexpr const char* aliases[] = {"float32", "F32"};
  static constexpr ElementCode element = ElementCode::f32;
  static constexpr BlockScaling scaling{};
  static constexpr bool global_scale = false;
  // Checkpoints: the weight's safetensors dtype; the config quantizations (model_config's
  // names) whose tables it may hold, the first the one a config made for it names; and the
  // quantization whose tables are made in this format by default (none: nullptr).
  static constexpr const char* safetensors_dtype = "F32";
  static constexpr const char* config_quantizations[] = {"none", "fp8_e8m0"};
  static constexpr const char* default_for = nullptr;

  PLESHARD_HD static constexpr std::size_t row_bytes(int head_dim) { return 4u * static_cast<std::size_t>(head_dim); }

  template <typename E4m3>
  PLESHARD_HD static float decode(const std::uint8_t* row, const std::uint8_t*, float, int j, E4m3) {
    float v;
    std::memcpy(&v, row + 4 * j, sizeof v);
    return v;
  }
  PLESHARD_HD static float global_scale_for(float) { return 1.0f; }
  PLESHARD_HD static void encode_value(float v, float, std::uint8_t* row, int j) {
    std::memcpy(row + 4 * j, &v, sizeof v);
  }

  // Anomalies (format/row_anomalies.hpp): a code of code_bytes bytes that is a NaN.
  static constexpr std::size_t code_bytes = 4;
  static bool nan_code(const std::uint8_t* code) {
    std::uint32_t v;
    std::memcpy(&v, code, sizeof v);
    return (v & 0x7FFFFFFFu) > 0x7F800000u;
  }
};

}  // namespace pleshard::kernels
