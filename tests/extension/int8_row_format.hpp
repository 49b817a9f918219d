#pragma once
// A row format defined outside the library, as a user of it would add one: "int8_row", rows
// of one float32 scale (amax / 127) followed by head_dim int8 codes, value = code * scale.
// Linking int8_row_format.cpp in registers it (docs/architecture.md, "Adding a row format").

#include "format/format_registry.hpp"

namespace int8_row {

inline constexpr const char* k_name = "int8_row";

// The id the registry gave the format.
[[nodiscard]] pleshard::RowFormat format();

}  // namespace int8_row
