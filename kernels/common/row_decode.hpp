#pragma once
// Row formats and their decoding (docs/design.md §3), shared by every storage tier: one copy
// of the bit-level math for the host (Kokkos) and CUDA kernels. Decoding is float32 with
// one final round-to-nearest-even to the output dtype.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/common/host_device.hpp"

namespace pleshard::kernels {

// How a table stores its rows. nvfp4 rows are head_dim/2 bytes of E2M1 pairs plus a
// separate plane of head_dim/16 E4M3 block scales.
enum class RowFormat : std::uint8_t { f32, bf16, f16, fp8, nvfp4 };

// Element type of looked-up embeddings.
enum class OutDtype : std::uint8_t { f32, bf16, f16 };

inline constexpr int k_nvfp4_block = 16;

PLESHARD_HD constexpr std::size_t stored_row_bytes(RowFormat format, int head_dim) {
  switch (format) {
    case RowFormat::f32:
      return 4u * static_cast<std::size_t>(head_dim);
    case RowFormat::bf16:
    case RowFormat::f16:
      return 2u * static_cast<std::size_t>(head_dim);
    case RowFormat::fp8:
      return static_cast<std::size_t>(head_dim);
    case RowFormat::nvfp4:
      return static_cast<std::size_t>(head_dim) / 2;
  }
  return 0;
}

// Bytes of block scales per row (nvfp4 only).
PLESHARD_HD constexpr std::size_t scale_row_bytes(RowFormat format, int head_dim) {
  return format == RowFormat::nvfp4 ? static_cast<std::size_t>(head_dim / k_nvfp4_block) : 0;
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
  const std::uint8_t* block_scales = nullptr;  // nvfp4: (row_end - row_begin) rows of head_dim/16
  float global_scale = 1.0f;                   // fp8 and nvfp4
  // Bytes from one row (block-scale row) to the next; 0 means packed. A GPU table keeps each
  // NVFP4 row's scales right after its codes (one pitch for both), so a lookup touches one
  // place in memory per row.
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
    const std::uint8_t pair = row[j / 2];
    const float e2m1 = decode_e2m1((j & 1) != 0 ? pair >> 4 : pair & 0xFu);
    return (e2m1 * e4m3(scales[j / k_nvfp4_block])) * global_scale;
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
  if constexpr (F == RowFormat::nvfp4) {
    // Same arithmetic as decode_value_as, with each block scale decoded once.
    const std::uint8_t* scales = t.scales_at(local);
    for (int b = 0; b < t.head_dim / k_nvfp4_block; ++b) {
      const float block_scale = decode_e4m3(scales[b]);
      for (int i = 0; i < k_nvfp4_block; i += 2) {
        const int j = b * k_nvfp4_block + i;
        const std::uint8_t pair = row[j / 2];
        store_value_as<O>(out, base + j, (decode_e2m1(pair & 0xFu) * block_scale) * t.global_scale);
        store_value_as<O>(out, base + j + 1, (decode_e2m1(pair >> 4) * block_scale) * t.global_scale);
      }
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
  }
}

}  // namespace pleshard::kernels
