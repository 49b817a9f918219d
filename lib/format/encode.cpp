#include "format/encode.hpp"

#include "kernels/common/row_encode.hpp"

namespace pleshard {

std::uint8_t encode_e4m3(float x) { return kernels::encode_e4m3(x); }
std::uint8_t encode_e2m1(float x) { return kernels::encode_e2m1(x); }
std::uint8_t encode_e8m0_scale(float amax) { return kernels::encode_e8m0_scale(amax); }
float fp8_global_scale(float amax) { return kernels::Fp8Format::global_scale_for(amax); }
float nvfp4_global_scale(float amax) { return kernels::Nvfp4Format::global_scale_for(amax); }

void encode_row(RowFormat format, std::span<const float> values, float global_scale, std::span<std::uint8_t> row,
                std::span<std::uint8_t> scales) {
  kernels::encode_row(format, values.data(), static_cast<int>(values.size()), global_scale, row.data(), scales.data());
}

}  // namespace pleshard
