#pragma once
// Row formats and their decoding (docs/design.md §3), shared by every storage tier: one copy
// of the bit-level math for the host (Kokkos) and CUDA kernels. Decoding is float32 with
// one final round-to-nearest-even to the output dtype. What differs by format is read from
// the built-in formats' traits (formats/builtin_formats.hpp) or, for a registered format, on
// the host, from its hooks (format_traits.hpp).

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/common/format_traits.hpp"
#include "kernels/common/formats/builtin_formats.hpp"
#include "kernels/common/host_device.hpp"
#include "kernels/common/scalar_codes.hpp"

namespace pleshard::kernels {

// Element type of looked-up embeddings.
enum class OutDtype : std::uint8_t { f32, bf16, f16 };

// The block scales of `format`: every tier, the packing, the encoders and the decode read a
// format's scale plane from here.
PLESHARD_HD constexpr BlockScaling block_scaling(RowFormat format) {
  return format_property<BlockScaling>(
      format, [](auto f) { return decltype(f)::scaling; }, [](const RowFormatHooks& h) { return h.scaling; });
}

// Whether a table of `format` carries one float32 scale for all its values (fp8, nvfp4). The
// others decode with a global scale of 1.
PLESHARD_HD constexpr bool has_global_scale(RowFormat format) {
  return format_property<bool>(
      format, [](auto f) { return decltype(f)::global_scale; }, [](const RowFormatHooks& h) { return h.global_scale; });
}

// Bytes of a row's codes (block scales apart).
PLESHARD_HD constexpr std::size_t stored_row_bytes(RowFormat format, int head_dim) {
  return format_property<std::size_t>(
      format, [head_dim](auto f) { return decltype(f)::row_bytes(head_dim); },
      [head_dim](const RowFormatHooks& h) { return h.row_bytes(head_dim); });
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

// Code j of a block-scaled row of format F, before its scales.
template <RowFormat F, typename E4m3 = DecodeE4m3>
PLESHARD_HD inline float block_element_as(const std::uint8_t* row, int j, E4m3 e4m3 = {}) {
  static_assert(block_scaling(F).scaled(), "a block-scaled format");
  return FormatTraits<F>::block_element(row, j, e4m3);
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
  if constexpr (block_scaling(F).scaled()) {
    constexpr int block = block_scaling(F).block;
    return (block_element_as<F>(row, j, e4m3) * block_scale_as<F>(scales[j / block], e4m3)) * global_scale;
  } else {
    return FormatTraits<F>::decode(row, scales, global_scale, j, e4m3);
  }
}

// Value j of a stored row, in float32.
PLESHARD_HD inline float decode_value(const TableView& t, const std::uint8_t* row, const std::uint8_t* scales, int j) {
  return format_property<float>(
      t.format, [&](auto f) { return decode_value_as<decltype(f)::id>(row, scales, t.global_scale, j); },
      [&](const RowFormatHooks& h) { return h.decode_value(row, scales, t.global_scale, j); });
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

// A row of a registered format, value by value through its hooks (on the host alone: GPU
// tiers refuse such tables).
template <OutDtype O>
inline void decode_registered_row_as(const TableView& t, std::int64_t id, void* out, std::int64_t base) {
  if (!t.owns(id)) {
    for (int j = 0; j < t.head_dim; ++j) store_value_as<O>(out, base + j, 0.0f);
    return;
  }
  const auto local = static_cast<std::size_t>(id - t.row_begin);
  const RowFormatHooks& hooks = registered_format_hooks(t.format);
  const std::uint8_t* scales = block_scaling(t.format).scaled() ? t.scales_at(local) : nullptr;
  for (int j = 0; j < t.head_dim; ++j)
    store_value_as<O>(out, base + j, hooks.decode_value(t.row_at(local), scales, t.global_scale, j));
}

// Decodes row `id` of the table into out[base .. base + head_dim), or writes zeros when
// the id is outside the rows this view holds.
PLESHARD_HD inline void decode_row(const TableView& t, std::int64_t id, OutDtype dtype, void* out, std::int64_t base) {
  if (visit_format(t.format, [&](auto f) { decode_row_to<decltype(f)::id>(t, id, dtype, out, base); })) return;
#ifndef __CUDA_ARCH__
  switch (dtype) {
    case OutDtype::f32:
      decode_registered_row_as<OutDtype::f32>(t, id, out, base);
      break;
    case OutDtype::bf16:
      decode_registered_row_as<OutDtype::bf16>(t, id, out, base);
      break;
    case OutDtype::f16:
      decode_registered_row_as<OutDtype::f16>(t, id, out, base);
      break;
  }
#endif
}

}  // namespace pleshard::kernels
