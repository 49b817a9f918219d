#include "format/row_anomalies.hpp"

#include "kernels/common/row_decode.hpp"

namespace pleshard {

namespace {

bool e4m3_nan(std::uint8_t b) { return (b & 0x7F) == 0x7F; }

}  // namespace

RowAnomalies& RowAnomalies::operator+=(const RowAnomalies& other) {
  if (other.first_row >= 0 && (first_row < 0 || other.first_row < first_row)) first_row = other.first_row;
  rows += other.rows;
  nan_code_rows += other.nan_code_rows;
  zero_scale_rows += other.zero_scale_rows;
  nan_scale_rows += other.nan_scale_rows;
  return *this;
}

std::string RowAnomalies::summary() const {
  if (!any()) return "none";
  std::string s;
  const auto add = [&](std::int64_t n, const char* what) {
    if (n == 0) return;
    s += (s.empty() ? std::to_string(n) + " rows with " : ", " + std::to_string(n) + " with ") + what;
  };
  add(nan_code_rows, "NaN codes");
  add(zero_scale_rows, "scale byte 0");
  add(nan_scale_rows, "NaN scales");
  return s + " (first: row " + std::to_string(first_row) + ")";
}

RowAnomalies scan_rows(const TableLayout& layout, std::int64_t first_row, std::int64_t count,
                       std::span<const std::uint8_t> rows, std::span<const std::uint8_t> scales) {
  const std::size_t row_bytes = layout.row_bytes();
  const std::size_t scale_bytes = layout.scale_bytes();
  const RowFormatDescriptor& format = describe(layout.format);
  const std::size_t width = format.code_bytes;
  const bool e8m0 = kernels::block_scaling(layout.format).code == kernels::ScaleCode::e8m0;
  const bool scaled = scale_bytes != 0 && !scales.empty();
  RowAnomalies found;
  found.rows = count;
  for (std::int64_t r = 0; r < count; ++r) {
    const std::uint8_t* codes = rows.data() + static_cast<std::size_t>(r) * row_bytes;
    bool nan_codes = false;
    for (std::size_t b = 0; b < row_bytes && !nan_codes; b += width) nan_codes = format.nan_code(codes + b);
    bool zero_scale = false;
    bool nan_scale = false;
    if (scaled) {
      const std::uint8_t* s = scales.data() + static_cast<std::size_t>(r) * scale_bytes;
      for (std::size_t b = 0; b < scale_bytes; ++b) {
        zero_scale |= e8m0 && s[b] == 0;
        nan_scale |= e8m0 ? s[b] == 0xFF : e4m3_nan(s[b]);
      }
    }
    found.nan_code_rows += nan_codes;
    found.zero_scale_rows += zero_scale;
    found.nan_scale_rows += nan_scale;
    if ((nan_codes || zero_scale || nan_scale) && found.first_row < 0) found.first_row = first_row + r;
  }
  return found;
}

}  // namespace pleshard
