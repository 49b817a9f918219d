#pragma once
// Names of row formats and output dtypes, and how a table of one layer is described.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "format/format_registry.hpp"
#include "kernels/common/row_decode.hpp"
#include "model/model_config.hpp"

namespace pleshard {

using kernels::OutDtype;
using kernels::RowFormat;

// A format's name ("f32", "bf16", ..., a registered format's; "?" for an id no format has).
[[nodiscard]] const char* to_string(RowFormat format);
[[nodiscard]] const char* to_string(OutDtype dtype);  // "float32", "bfloat16", "float16"
// Accepts every known format's name and aliases ("float32", "bfloat16", "float8_e4m3fn",
// "mxfp8", ...: format/format_registry.hpp).
[[nodiscard]] RowFormat parse_row_format(std::string_view name);
[[nodiscard]] OutDtype parse_out_dtype(std::string_view name);
// The dtype named `name` (as parse_out_dtype takes it), or nothing (a name read from a file).
[[nodiscard]] std::optional<OutDtype> out_dtype_named(std::string_view name);

// The stored format a config implies for a quantized table; unquantized configs allow
// f32, bf16 or f16 rows, and float8_e4m3fn configs fp8 or fp8_e8m0 rows (the checkpoint
// decides).
[[nodiscard]] bool format_matches_config(RowFormat format, TableQuantization quantization);
// The format tables of `quantization` are made in by default (bf16 for unquantized configs).
[[nodiscard]] RowFormat default_row_format(TableQuantization quantization);
// The quantization a config made for tables of `format` names.
[[nodiscard]] TableQuantization config_quantization(RowFormat format);

// The shape of one PLE table as stored.
struct TableLayout {
  RowFormat format = RowFormat::bf16;
  int head_dim = 0;
  std::int64_t rows = 0;  // padded rows

  [[nodiscard]] std::size_t row_bytes() const { return kernels::stored_row_bytes(format, head_dim); }
  [[nodiscard]] std::size_t scale_bytes() const { return kernels::scale_row_bytes(format, head_dim); }
  // Whether head_dim splits into whole blocks of the format's scales (always, unscaled).
  [[nodiscard]] bool whole_blocks() const { return kernels::whole_blocks(format, head_dim); }
  // Stored bytes per row, block scales included (FBGEMM's convention for GB/s).
  [[nodiscard]] std::size_t bytes_per_row() const { return row_bytes() + scale_bytes(); }
};

}  // namespace pleshard
