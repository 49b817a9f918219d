#include "extension/int8_row_format.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace int8_row {

namespace {

float decode_value(const std::uint8_t* row, const std::uint8_t*, float, int j) {
  float scale;
  std::memcpy(&scale, row, sizeof scale);
  return static_cast<float>(static_cast<std::int8_t>(row[sizeof scale + static_cast<std::size_t>(j)])) * scale;
}

void encode_row(const float* values, int head_dim, float, std::uint8_t* row, std::uint8_t*) {
  float amax = 0;
  for (int j = 0; j < head_dim; ++j) amax = std::max(amax, std::fabs(values[j]));
  const float scale = amax > 0 ? amax / 127.0f : 1.0f;
  std::memcpy(row, &scale, sizeof scale);
  for (int j = 0; j < head_dim; ++j) {
    const long code = std::clamp(std::lround(values[j] / scale), -127L, 127L);
    row[sizeof scale + static_cast<std::size_t>(j)] = static_cast<std::uint8_t>(static_cast<std::int8_t>(code));
  }
}

pleshard::RowFormatDescriptor descriptor() {
  pleshard::RowFormatDescriptor d;
  d.name = k_name;
  d.aliases = {"int8-row"};
  d.safetensors_dtype = "I8";
  d.config_quantizations = {"none"};  // stores unquantized configs' tables
  d.code_bytes = 1;
  d.nan_code = [](const std::uint8_t*) { return false; };  // int8 codes have no NaN
  d.hooks.row_bytes = [](int head_dim) { return sizeof(float) + static_cast<std::size_t>(head_dim); };
  d.hooks.global_scale_for = [](float) { return 1.0f; };
  d.hooks.decode_value = &decode_value;
  d.hooks.encode_row = &encode_row;
  return d;
}

const pleshard::RowFormatRegistration k_registration{descriptor()};

}  // namespace

pleshard::RowFormat format() { return k_registration.format; }

}  // namespace int8_row
