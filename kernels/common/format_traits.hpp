#pragma once
// What names a row format and what every format says of its layout, and the host-side hooks
// of formats registered at run time. Each built-in format is one file of traits under
// kernels/common/formats/ (listed in formats/builtin_formats.hpp); docs/architecture.md says
// how to add one.

#include <cstddef>
#include <cstdint>

#include "kernels/common/host_device.hpp"

namespace pleshard::kernels {

// How a table stores its rows: a built-in format (the enumerators, compiled into every
// kernel), or from k_first_registered_format on a format registered at run time, decoded on
// the host through its hooks (RowFormatHooks). The underlying byte is the id: any value is a
// RowFormat, named or not.
enum class RowFormat : std::uint8_t { f32, bf16, f16, fp8, nvfp4, fp8_e8m0 };

inline constexpr int k_first_registered_format = 64;

PLESHARD_HD constexpr bool registered_format(RowFormat format) {
  return static_cast<int>(format) >= k_first_registered_format;
}

// How a block scale byte is coded: E4M3 (a float8, bias 7) or E8M0 (a power of two, 2^(s - 127)).
enum class ScaleCode : std::uint8_t { none, e4m3, e8m0 };

// A format's block scales: one scale byte of `code` per `block` values (block 0: none). A
// block-scaled value is (element * block scale) * global scale, in float32. Block-scaled
// formats keep the scales in a plane of their own beside the codes.
struct BlockScaling {
  int block = 0;
  ScaleCode code = ScaleCode::none;
  [[nodiscard]] PLESHARD_HD constexpr bool scaled() const { return block != 0; }
};

// The largest block of any format (an encoder's scratch for one block).
inline constexpr int k_max_scale_block = 32;

// The codes a built-in format's values are stored as: what a GPU launch decodes them with
// (E4M3 and E2M1 through tables in shared memory, the others by arithmetic).
enum class ElementCode : std::uint8_t { f32, bf16, f16, e4m3, e2m1 };

// A format registered at run time (lib/format/format_registry.hpp): the host functions the
// shared decode and encode reach it through. It has no device code: GPU tiers refuse its
// tables. registered_format_hooks gives an id never registered hooks that describe nothing
// (rows of 0 bytes, values 0).
struct RowFormatHooks {
  std::size_t (*row_bytes)(int head_dim) = nullptr;
  BlockScaling scaling;
  bool global_scale = false;  // a table carries one float32 scale for all its values
  // The global scale a table whose largest magnitude is `amax` is encoded with (1 without one).
  float (*global_scale_for)(float amax) = nullptr;
  // Value j of a stored row (its block scales in `scales`), in float32.
  float (*decode_value)(const std::uint8_t* row, const std::uint8_t* scales, float global_scale, int j) = nullptr;
  // head_dim values encoded into a stored row and (block-scaled) its block scales.
  void (*encode_row)(const float* values, int head_dim, float global_scale, std::uint8_t* row,
                     std::uint8_t* scales) = nullptr;
};

// The hooks of registered `format` (host only; kernels/host/format_hooks.cpp holds them).
[[nodiscard]] const RowFormatHooks& registered_format_hooks(RowFormat format);

// Gives `hooks` the next free registered id; throws std::length_error once every id is taken.
[[nodiscard]] RowFormat register_format_hooks(const RowFormatHooks& hooks);

}  // namespace pleshard::kernels
