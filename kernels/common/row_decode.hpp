#pragma once
// Row formats and their decoding (docs/design.md §3), shared by every storage tier: one copy
// of the bit-level math for the host (Kokkos) and CUDA kernels. Decoding is float32 with
// one final round-to-nearest-even to the output dtype.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/common/host_device.hpp"

namespace pleshard::kernels {

// How a table stores its rows. Block-scaled formats keep a separate plane of one scale byte
// per block of values beside their codes (block_scaling): nvfp4 rows are head_dim/2 bytes of
// E2M1 pairs with head_dim/16 E4M3 scales, fp8_e8m0 rows head_dim E4M3 bytes with head_dim/32
// E8M0 scales (MXFP8's layout; DeepSeek-V4.1's Engram tables).
enum class RowFormat : std::uint8_t { f32, bf16, f16, fp8, nvfp4, fp8_e8m0 };

// Element type of looked-up embeddings.
enum class OutDtype : std::uint8_t { f32, bf16, f16 };

// How a block scale byte is coded: E4M3 (a float8, bias 7) or E8M0 (a power of two, 2^(s - 127)).
enum class ScaleCode : std::uint8_t { none, e4m3, e8m0 };

// A format's block scales: one scale byte of `code` per `block` values (block 0: none). A
// block-scaled value is (element * block scale) * global scale, in float32.
struct BlockScaling {
  int block = 0;
  ScaleCode code = ScaleCode::none;
  [[nodiscard]] PLESHARD_HD constexpr bool scaled() const { return block != 0; }
};

// The one table of block-scaled formats: every tier, the packing, the encoders and the decode
// read a format's scale plane from here.
PLESHARD_HD constexpr BlockScaling block_scaling(RowFormat format) {
  switch (format) {
    case RowFormat::f32:
    case RowFormat::bf16:
    case RowFormat::f16:
    case RowFormat::fp8:
      return {};
    case RowFormat::nvfp4:
      return {16, ScaleCode::e4m3};
    case RowFormat::fp8_e8m0:
      return {32, ScaleCode::e8m0};
  }
  return {};
}

// The largest block of any format (an encoder's scratch for one block).
inline constexpr int k_max_scale_block = 32;

// Whether a table of `format` carries one float32 scale for all its values (fp8, nvfp4). The
// others decode with a global scale of 1.
PLESHARD_HD constexpr bool has_global_scale(RowFormat format) {
  return format == RowFormat::fp8 || format == RowFormat::nvfp4;
}

PLESHARD_HD constexpr std::size_t stored_row_bytes(RowFormat format, int head_dim) {
  switch (format) {
    case RowFormat::f32:
      return 4u * static_cast<std::size_t>(head_dim);
    case RowFormat::bf16:
    case RowFormat::f16:
      return 2u * static_cast<std::size_t>(head_dim);
    case RowFormat::fp8:
    case RowFormat::fp8_e8m0:
      return static_cast<std::size_t>(head_dim);
    case RowFormat::nvfp4:
      return static_cast<std::size_t>(head_dim) / 2;
  }
  return 0;
}

// Bytes of block scales per row: one per block (none for formats without block scales).
PLESHARD_HD constexpr std::size_t scale_row_bytes(RowFormat format, int head_dim) {
  const BlockScaling s = block_scaling(format);
  return s.scaled() ? static_cast<std::size_t>(head_dim / s.block) : 0;
}

// Whether rows of head_dim values split into whole blocks of the format's scales.
PLESHARD_HD constexpr bool whole_blocks(RowFormat format, int head_dim) {
  const BlockScaling s = block_scaling(format);
  return !s.scaled() || head_dim % s.block == 0;
}

PLESHARD_HD constexpr std::size_t out_bytes(OutDtype dtype) { return dtype == OutDtype::f32 ? 4u : 2u; }

PLESHARD_HD inline float float_from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

PLESHARD_HD inline std::uint32_t bits_from_float(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

PLESHARD_HD inline float decode_bf16(std::uint16_t h) { return float_from_bits(static_cast<std::uint32_t>(h) << 16); }

PLESHARD_HD inline float decode_f16(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  const std::uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 31) return float_from_bits(sign | 0x7F800000u | (mantissa << 13));
  return float_from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// E4M3 "fn": bias 7, no infinities, S.1111.111 is NaN, max 448.
PLESHARD_HD inline float decode_e4m3(std::uint8_t b) {
  const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x80u) << 24;
  const std::uint32_t exponent = (b >> 3) & 0xFu;
  const std::uint32_t mantissa = b & 0x7u;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-9
    const float magnitude = static_cast<float>(mantissa) * 0.001953125f;
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 15 && mantissa == 7) return float_from_bits(sign | 0x7FC00000u);
  return float_from_bits(sign | ((exponent + 120) << 23) | (mantissa << 20));
}

// E8M0 (UE8M0): 2^(s - 127), no sign and no mantissa; 255 is NaN. Built from the float's
// bits: s >= 1 is the exponent field itself, and s = 0, 2^-127, is the float32 subnormal
// 0x00400000 (kept, never flushed: the decode multiplies by it exactly).
PLESHARD_HD inline float decode_e8m0(std::uint8_t s) {
  const std::uint32_t bits = s == 0 ? 0x00400000u : s == 255 ? 0x7FC00000u : static_cast<std::uint32_t>(s) << 23;
  return float_from_bits(bits);
}

// E2M1: codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6; bit 3 is the sign.
// Twice the magnitudes (0, 1, 2, 3, 4, 6, 8, 12) packed in one word: an indexed array would
// live in a GPU thread's local memory, a load per value.
PLESHARD_HD inline float decode_e2m1(std::uint8_t nibble) {
  const std::uint32_t twice = (0xC8643210u >> ((nibble & 0x7u) * 4)) & 0xFu;
  const float m = static_cast<float>(twice) * 0.5f;
  return (nibble & 0x8u) != 0 ? -m : m;
}

// float -> bfloat16, round to nearest even; NaN stays a (quiet) NaN.
PLESHARD_HD inline std::uint16_t encode_bf16(float f) {
  const std::uint32_t bits = bits_from_float(f);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// float -> IEEE half, round to nearest even, overflow to infinity.
PLESHARD_HD inline std::uint16_t encode_f16(float f) {
  std::uint32_t bits = bits_from_float(f);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  bits &= 0x7FFFFFFFu;
  if (bits >= 0x7F800000u)  // infinity or NaN
    return static_cast<std::uint16_t>(sign | (bits > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (bits < 0x38800000u) {                                           // below 2^-14: a half subnormal or zero
    if (bits < 0x33000000u) return static_cast<std::uint16_t>(sign);  // <= 2^-25 rounds to 0
    const std::uint32_t exponent = bits >> 23;
    const std::uint32_t mantissa = (bits & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126 - exponent;  // value / 2^-24 = mantissa >> shift
    std::uint32_t h = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1u) != 0)) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = (bits >> 13) - (112u << 10);
  const std::uint32_t rest = bits & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0)) ++h;
  return static_cast<std::uint16_t>(sign | (h < 0x7C00u ? h : 0x7C00u));
}

// Where a lookup reads its rows: the rows [row_begin, row_end) of one table.
struct TableView {
  RowFormat format = RowFormat::bf16;
  int head_dim = 0;
  std::int64_t row_begin = 0;
  std::int64_t row_end = 0;
  const std::uint8_t* rows = nullptr;          // (row_end - row_begin) rows
  const std::uint8_t* block_scales = nullptr;  // block-scaled formats: a row of scale_row_bytes per row
  float global_scale = 1.0f;                   // 1 where the format has none (has_global_scale)
  // Bytes from one row (block-scale row) to the next; 0 means packed. A GPU table keeps each
  // block-scaled row's scales right after its codes (one pitch for both), so a lookup touches
  // one place in memory per row.
  std::size_t row_pitch = 0;
  std::size_t scale_pitch = 0;

  [[nodiscard]] PLESHARD_HD bool owns(std::int64_t id) const { return id >= row_begin && id < row_end; }
  [[nodiscard]] PLESHARD_HD std::size_t row_stride() const {
    return row_pitch != 0 ? row_pitch : stored_row_bytes(format, head_dim);
  }
  [[nodiscard]] PLESHARD_HD const std::uint8_t* row_at(std::size_t local) const { return rows + local * row_stride(); }
  [[nodiscard]] PLESHARD_HD const std::uint8_t* scales_at(std::size_t local) const {
    return block_scales + local * (scale_pitch != 0 ? scale_pitch : scale_row_bytes(format, head_dim));
  }
};

// Most PLE layers one step decodes in a single launch (docs/design.md §9's models have 1 or 2).
inline constexpr int k_max_step_layers = 8;

// One layer's share of a step's decode: entry i (token i / heads, head i % heads) is row
// keys[i] of `rows`, or zeros where that key is outside the rows the view holds; its
// head_dim values go to out + i * head_dim. Every tier hands the decode such a view: the
// table itself (device, pinned, host) or a block of fetched rows (staged pinned, disk).
struct DecodeTask {
  TableView rows;
  const std::int64_t* keys = nullptr;
  std::int64_t count = 0;
  void* out = nullptr;
};

// E4M3 decoding as a callable, so a kernel can substitute a table filled by decode_e4m3.
struct DecodeE4m3 {
  PLESHARD_HD float operator()(std::uint8_t b) const { return decode_e4m3(b); }
};

// Code j of a block-scaled row of format F, before its scales: an E2M1 nibble (nvfp4,
// element 2i in the low nibble of byte i) or an E4M3 byte (fp8_e8m0).
template <RowFormat F, typename E4m3 = DecodeE4m3>
PLESHARD_HD inline float block_element_as(const std::uint8_t* row, int j, E4m3 e4m3 = {}) {
  static_assert(block_scaling(F).scaled(), "a block-scaled format");
  if constexpr (F == RowFormat::nvfp4) {
    const std::uint8_t pair = row[j / 2];
    return decode_e2m1((j & 1) != 0 ? pair >> 4 : pair & 0xFu);
  } else {
    return e4m3(row[j]);
  }
}

// A block scale byte of format F, in float32.
template <RowFormat F, typename E4m3 = DecodeE4m3>
PLESHARD_HD inline float block_scale_as(std::uint8_t s, E4m3 e4m3 = {}) {
  if constexpr (block_scaling(F).code == ScaleCode::e4m3) {
    return e4m3(s);
  } else {
    static_assert(block_scaling(F).code == ScaleCode::e8m0, "a block-scaled format");
    return decode_e8m0(s);
  }
}

// Value j of a stored row of format F, in float32.
template <RowFormat F, typename E4m3 = DecodeE4m3>
PLESHARD_HD inline float decode_value_as(const std::uint8_t* row, const std::uint8_t* scales, float global_scale, int j,
                                         E4m3 e4m3 = {}) {
  if constexpr (F == RowFormat::f32) {
    float v;
    std::memcpy(&v, row + 4 * j, sizeof v);
    return v;
  } else if constexpr (F == RowFormat::bf16 || F == RowFormat::f16) {
    std::uint16_t h;
    std::memcpy(&h, row + 2 * j, sizeof h);
    return F == RowFormat::bf16 ? decode_bf16(h) : decode_f16(h);
  } else if constexpr (F == RowFormat::fp8) {
    return e4m3(row[j]) * global_scale;
  } else {
    constexpr int block = block_scaling(F).block;
    return (block_element_as<F>(row, j, e4m3) * block_scale_as<F>(scales[j / block], e4m3)) * global_scale;
  }
}

// Value j of a stored row, in float32.
PLESHARD_HD inline float decode_value(const TableView& t, const std::uint8_t* row, const std::uint8_t* scales, int j) {
  switch (t.format) {
    case RowFormat::f32:
      return decode_value_as<RowFormat::f32>(row, scales, t.global_scale, j);
    case RowFormat::bf16:
      return decode_value_as<RowFormat::bf16>(row, scales, t.global_scale, j);
    case RowFormat::f16:
      return decode_value_as<RowFormat::f16>(row, scales, t.global_scale, j);
    case RowFormat::fp8:
      return decode_value_as<RowFormat::fp8>(row, scales, t.global_scale, j);
    case RowFormat::nvfp4:
      return decode_value_as<RowFormat::nvfp4>(row, scales, t.global_scale, j);
    case RowFormat::fp8_e8m0:
      return decode_value_as<RowFormat::fp8_e8m0>(row, scales, t.global_scale, j);
  }
  return 0.0f;
}

template <OutDtype O>
PLESHARD_HD inline void store_value_as(void* out, std::int64_t index, float v) {
  if constexpr (O == OutDtype::f32) {
    static_cast<float*>(out)[index] = v;
  } else if constexpr (O == OutDtype::bf16) {
    static_cast<std::uint16_t*>(out)[index] = encode_bf16(v);
  } else {
    static_cast<std::uint16_t*>(out)[index] = encode_f16(v);
  }
}

// One row, format and output dtype fixed at compile time so the inner loop is tight.
template <RowFormat F, OutDtype O>
PLESHARD_HD inline void decode_row_as(const TableView& t, std::int64_t id, void* out, std::int64_t base) {
  if (!t.owns(id)) {
    for (int j = 0; j < t.head_dim; ++j) store_value_as<O>(out, base + j, 0.0f);
    return;
  }
  const auto local = static_cast<std::size_t>(id - t.row_begin);
  const std::uint8_t* row = t.row_at(local);
  if constexpr (block_scaling(F).scaled()) {
    // Same arithmetic as decode_value_as, with each block scale decoded once.
    constexpr int block = block_scaling(F).block;
    const std::uint8_t* scales = t.scales_at(local);
    for (int b = 0; b < t.head_dim / block; ++b) {
      const float block_scale = block_scale_as<F>(scales[b]);
      for (int j = b * block; j < (b + 1) * block; ++j)
        store_value_as<O>(out, base + j, (block_element_as<F>(row, j) * block_scale) * t.global_scale);
    }
  } else {
    for (int j = 0; j < t.head_dim; ++j)
      store_value_as<O>(out, base + j, decode_value_as<F>(row, nullptr, t.global_scale, j));
  }
}

template <RowFormat F>
PLESHARD_HD inline void decode_row_to(const TableView& t, std::int64_t id, OutDtype dtype, void* out,
                                      std::int64_t base) {
  switch (dtype) {
    case OutDtype::f32:
      decode_row_as<F, OutDtype::f32>(t, id, out, base);
      break;
    case OutDtype::bf16:
      decode_row_as<F, OutDtype::bf16>(t, id, out, base);
      break;
    case OutDtype::f16:
      decode_row_as<F, OutDtype::f16>(t, id, out, base);
      break;
  }
}

// Decodes row `id` of the table into out[base .. base + head_dim), or writes zeros when
// the id is outside the rows this view holds.
PLESHARD_HD inline void decode_row(const TableView& t, std::int64_t id, OutDtype dtype, void* out, std::int64_t base) {
  switch (t.format) {
    case RowFormat::f32:
      decode_row_to<RowFormat::f32>(t, id, dtype, out, base);
      break;
    case RowFormat::bf16:
      decode_row_to<RowFormat::bf16>(t, id, dtype, out, base);
      break;
    case RowFormat::f16:
      decode_row_to<RowFormat::f16>(t, id, dtype, out, base);
      break;
    case RowFormat::fp8:
      decode_row_to<RowFormat::fp8>(t, id, dtype, out, base);
      break;
    case RowFormat::nvfp4:
      decode_row_to<RowFormat::nvfp4>(t, id, dtype, out, base);
      break;
    case RowFormat::fp8_e8m0:
      decode_row_to<RowFormat::fp8_e8m0>(t, id, dtype, out, base);
      break;
  }
}

}  // namespace pleshard::kernels
