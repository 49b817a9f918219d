#include "kernels/host/row_gather_host.hpp"

#include <algorithm>
#include <cstring>

#include "core/parallel.hpp"

namespace pleshard::kernels {

namespace {

// Rows prefetched ahead of the one being copied: a row is a few cache lines at a random
// place of a table of tens of GB, so each copy would otherwise wait out a memory (and
// often a page-walk) latency on its own; with the next rows' lines requested first, a
// thread keeps that many misses in flight.
constexpr std::int64_t k_prefetch_rows = 8;
constexpr std::size_t k_line = 64;
// Rows a thread takes at a time: enough that waking a helper pays (a cold row is 50-200 ns),
// few enough that a step of a few thousand rows keeps every thread busy.
constexpr std::size_t k_rows_per_piece = 64;

void prefetch(const std::uint8_t* p, std::size_t bytes) {
  for (std::size_t b = 0; b < bytes; b += k_line) __builtin_prefetch(p + b);
}

}  // namespace

void gather_rows_host(const TableView& table, const std::uint32_t* offsets, std::int64_t count, std::uint8_t* rows,
                      std::uint8_t* scales, std::size_t threads) {
  const std::size_t row_bytes = stored_row_bytes(table.format, table.head_dim);
  const std::size_t scale_bytes = table.block_scales != nullptr ? scale_row_bytes(table.format, table.head_dim) : 0;
  // A GPU table keeps a row's block scales right after its codes: one stride holds both.
  const std::size_t stride = table.row_stride();
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(0, count));
  const std::size_t pieces = (n + k_rows_per_piece - 1) / k_rows_per_piece;
  parallel_for(pieces, std::max<std::size_t>(1, threads), 1, [&](std::size_t piece) {
    const auto begin = static_cast<std::int64_t>(piece * k_rows_per_piece);
    const auto end = static_cast<std::int64_t>(std::min(n, (piece + 1) * k_rows_per_piece));
    for (std::int64_t r = begin; r < std::min(end, begin + k_prefetch_rows); ++r)
      prefetch(table.row_at(offsets[r]), stride);
    for (std::int64_t r = begin; r < end; ++r) {
      if (r + k_prefetch_rows < end) prefetch(table.row_at(offsets[r + k_prefetch_rows]), stride);
      std::memcpy(rows + static_cast<std::size_t>(r) * row_bytes, table.row_at(offsets[r]), row_bytes);
      if (scale_bytes != 0)
        std::memcpy(scales + static_cast<std::size_t>(r) * scale_bytes, table.scales_at(offsets[r]), scale_bytes);
    }
  });
}

}  // namespace pleshard::kernels
