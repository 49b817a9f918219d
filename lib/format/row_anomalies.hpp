#pragma once
// Stored bytes whose values the stacks that read them disagree on. pleshard decodes them by
// the float32 rules of docs/design.md (§3, §10); a checkpoint holding them is valid, but a
// user comparing pleshard's embeddings with another stack's wants to know where they are:
// codes that are NaN (E4M3 0x7F/0xFF; NaN bit patterns of the float formats), E8M0 scale
// bytes 0 (2^-127, flushed to zero by some) and 255 (NaN), E4M3 block scales that are NaN.

#include <cstdint>
#include <span>
#include <string>

#include "format/row_format.hpp"

namespace pleshard {

struct RowAnomalies {
  std::int64_t rows = 0;             // rows scanned
  std::int64_t nan_code_rows = 0;    // rows holding at least one NaN code
  std::int64_t zero_scale_rows = 0;  // rows with an E8M0 scale byte 0
  std::int64_t nan_scale_rows = 0;   // rows with a NaN scale (E8M0 255, E4M3 0x7F/0xFF)
  std::int64_t first_row = -1;       // the first row holding any of them; -1: none

  [[nodiscard]] bool any() const { return first_row >= 0; }
  RowAnomalies& operator+=(const RowAnomalies& other);
  // "3 rows with NaN codes, 1 with scale byte 0 (first: row 17)", or "none".
  [[nodiscard]] std::string summary() const;
};

// The anomalies of `count` consecutive stored rows that start at row `first_row`, their
// codes in `rows` and block scales in `scales` (empty for unscaled formats).
[[nodiscard]] RowAnomalies scan_rows(const TableLayout& layout, std::int64_t first_row, std::int64_t count,
                                     std::span<const std::uint8_t> rows, std::span<const std::uint8_t> scales);

}  // namespace pleshard
