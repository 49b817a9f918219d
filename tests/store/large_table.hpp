#pragma once
// A bf16 table of 15M rows of 160 values (4.8 GB, so rows lie past 2^32 bytes) whose rows
// carry their own index: the expected bytes of a bf16 lookup are computed, not copied from
// a second table.

#include <cstdint>
#include <span>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"

namespace pleshard::testing_support {

struct LargeTable {
  static constexpr int head_dim = 160;
  static constexpr std::int64_t rows = 15'000'000;

  // Value j of a row: its first four values are the row index's 16-bit words.
  static std::uint16_t value(std::int64_t row, int j) {
    if (j < 4) return static_cast<std::uint16_t>(static_cast<std::uint64_t>(row) >> (16 * j));
    return static_cast<std::uint16_t>((static_cast<std::uint64_t>(row) * 2654435761u + static_cast<unsigned>(j)) >> 7);
  }

  static TableSource source() {
    TableSource s;
    s.info.layout.format = RowFormat::bf16;
    s.info.layout.head_dim = head_dim;
    s.info.layout.rows = rows;
    s.rows = [](std::int64_t begin, std::int64_t end, std::span<std::uint8_t> out, std::span<std::uint8_t>) {
      auto* v = reinterpret_cast<std::uint16_t*>(out.data());
      for (std::int64_t r = begin; r < end; ++r)
        for (int j = 0; j < head_dim; ++j) *v++ = value(r, j);
    };
    return s;
  }

  // Rows on both sides of the 2^32-byte boundary (row 13,421,772.8), the ends, and ids
  // outside the table.
  static std::vector<std::int64_t> ids() {
    return {rows - 1, 0, 13'421'773, 13'421'772, rows / 2, rows - 2, 14'999'000, -1, rows};
  }

  // A bf16 lookup of `ids`: the rows' own values, zeros outside the table.
  static std::vector<std::uint16_t> expected(const std::vector<std::int64_t>& ids) {
    std::vector<std::uint16_t> out(ids.size() * head_dim, 0);
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (ids[i] >= 0 && ids[i] < rows)
        for (int j = 0; j < head_dim; ++j) out[i * head_dim + static_cast<std::size_t>(j)] = value(ids[i], j);
    return out;
  }
};

}  // namespace pleshard::testing_support
