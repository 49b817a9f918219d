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

// The packed row of `key` in `table` (its codes, then its scales) at `out`; zeros where
// the table does not hold it. Byte `lane`, then every `lanes`-th: a GPU warp copies a row
// together, each load of the warp one run of consecutive bytes (one transaction over PCIe
// where the table is pinned host memory, where a thread per row made one per byte).
PLESHARD_HD inline void pack_stored_row(const TableView& table, std::int64_t key, std::uint8_t* out, int lane = 0,
                                        int lanes = 1) {
  const std::size_t row_bytes = stored_row_bytes(table.format, table.head_dim);
  const std::size_t scale_bytes = scale_row_bytes(table.format, table.head_dim);
  const auto first = static_cast<std::size_t>(lane);
  const auto stride = static_cast<std::size_t>(lanes);
  if (!table.owns(key)) {
    for (std::size_t b = first; b < row_bytes + scale_bytes; b += stride) out[b] = 0;
    return;
  }
  const auto local = static_cast<std::size_t>(key - table.row_begin);
  const std::uint8_t* row = table.row_at(local);
  for (std::size_t b = first; b < row_bytes; b += stride) out[b] = row[b];
  if (scale_bytes != 0) {
    const std::uint8_t* scales = table.scales_at(local);
    for (std::size_t b = first; b < scale_bytes; b += stride) out[row_bytes + b] = scales[b];
  }
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
