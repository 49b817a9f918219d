#pragma once
// Stored rows moved between ranks as they are stored, never decoded: the owner exchange's
// owners pack the rows a peer asked for (codes, then any block scales) into one packed
// row each, and the peer decodes them with the shared decode core as a table of packed
// rows. Peers ask for rows by rank-local index in the narrowest width that holds one.
// One copy of this math for the host and the GPU.

#include <cstddef>
#include <cstdint>

#include "kernels/common/host_device.hpp"
#include "kernels/common/row_decode.hpp"

namespace pleshard::kernels {

// Bytes of one packed row of `format`: its codes and its block scales.
[[nodiscard]] PLESHARD_HD inline std::size_t packed_row_bytes(RowFormat format, int head_dim) {
  return stored_row_bytes(format, head_dim) + scale_row_bytes(format, head_dim);
}

// n bytes to copy from src to dst, or n zeros to write where src is null.
struct ByteSpan {
  std::uint8_t* dst = nullptr;
  const std::uint8_t* src = nullptr;
  std::size_t n = 0;
};

// Moves one or two spans: the host's plain copy here, or a GPU warp's wide loads, both
// spans' in flight together (kernels/cuda/warp_bytes.cuh).
struct HostBytes {
  PLESHARD_HD void operator()(ByteSpan a, ByteSpan b = {}) const {
    move(a);
    move(b);
  }
  PLESHARD_HD static void move(const ByteSpan& s) {
    if (s.src == nullptr) {
      for (std::size_t i = 0; i < s.n; ++i) s.dst[i] = 0;
    } else {
      for (std::size_t i = 0; i < s.n; ++i) s.dst[i] = s.src[i];
    }
  }
};

// The packed row of `key` in `table` (its codes, then its scales) at `out`; zeros where
// the table does not hold it. `bytes` moves them (HostBytes, or a GPU warp's copy).
template <typename Bytes>
PLESHARD_HD void pack_stored_row(const TableView& table, std::int64_t key, std::uint8_t* out, const Bytes& bytes) {
  const std::size_t row_bytes = stored_row_bytes(table.format, table.head_dim);
  const std::size_t scale_bytes = scale_row_bytes(table.format, table.head_dim);
  if (!table.owns(key)) {
    bytes({out, nullptr, row_bytes + scale_bytes});
    return;
  }
  const auto local = static_cast<std::size_t>(key - table.row_begin);
  bytes({out, table.row_at(local), row_bytes},
        {out + row_bytes, scale_bytes != 0 ? table.scales_at(local) : nullptr, scale_bytes});
}

// A view of `count` packed rows at `packed` with the table's format and scale.
[[nodiscard]] PLESHARD_HD inline TableView packed_rows_view(const TableView& table, const std::uint8_t* packed,
                                                            std::int64_t count) {
  const std::size_t pitch = packed_row_bytes(table.format, table.head_dim);
  TableView view{table.format, table.head_dim, 0, count, packed, nullptr, table.global_scale, pitch, pitch};
  if (scale_row_bytes(table.format, table.head_dim) != 0)
    view.block_scales = packed + stored_row_bytes(table.format, table.head_dim);
  return view;
}

// Bytes of a rank-local row index for ranges of at most `rows` rows: 2, 4 or 8.
[[nodiscard]] PLESHARD_HD inline int local_id_bytes(std::int64_t rows) {
  return rows <= (std::int64_t{1} << 16) ? 2 : rows <= (std::int64_t{1} << 32) ? 4 : 8;
}

// Local index i of `width` bytes (little-endian) at `ids`, as a global id from `first`.
[[nodiscard]] PLESHARD_HD inline std::int64_t widen_local_id(const std::uint8_t* ids, int width, std::int64_t i,
                                                             std::int64_t first) {
  std::uint64_t v = 0;
  for (int b = width - 1; b >= 0; --b) v = (v << 8) | ids[static_cast<std::size_t>(i) * width + b];
  return first + static_cast<std::int64_t>(v);
}

// Writes `local` as `width` little-endian bytes at entry i of `ids`.
PLESHARD_HD inline void narrow_local_id(std::uint8_t* ids, int width, std::int64_t i, std::uint64_t local) {
  for (int b = 0; b < width; ++b)
    ids[static_cast<std::size_t>(i) * width + b] = static_cast<std::uint8_t>(local >> (8 * b));
}

// One layer's packing: rows keys[0..count) of `table` into count packed rows at `out`.
struct PackTask {
  TableView table;
  const std::int64_t* keys = nullptr;
  std::int64_t count = 0;
  std::uint8_t* out = nullptr;
};

}  // namespace pleshard::kernels
