#pragma once
// Encoders used to make checkpoints: the host face of kernels/common/row_encode.hpp, whose
// header states the conventions.

#include <cstdint>
#include <span>

#include "format/row_format.hpp"

namespace pleshard {

// Nearest E4M3 code (ties to even, saturating at 448; NaN to NaN).
[[nodiscard]] std::uint8_t encode_e4m3(float x);
// Nearest E2M1 nibble (ties to even, saturating at 6).
[[nodiscard]] std::uint8_t encode_e2m1(float x);

// E8M0 block scale byte for a block whose largest magnitude is `amax`: the smallest power of
// two 2^e with amax <= 448 * 2^e, as e + 127.
[[nodiscard]] std::uint8_t encode_e8m0_scale(float amax);

[[nodiscard]] float fp8_global_scale(float amax);
[[nodiscard]] float nvfp4_global_scale(float amax);

// Encodes one row of head_dim values. `row` has stored_row_bytes bytes and `scales`
// scale_row_bytes bytes (block-scaled formats only, else empty).
void encode_row(RowFormat format, std::span<const float> values, float global_scale, std::span<std::uint8_t> row,
                std::span<std::uint8_t> scales);

}  // namespace pleshard
