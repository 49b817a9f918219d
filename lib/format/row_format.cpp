#include "format/row_format.hpp"

#include <algorithm>

#include "core/enum_names.hpp"
#include "core/option_names.hpp"

namespace pleshard {

namespace {

constexpr EnumNames<OutDtype, 6> k_out_dtypes{{{OutDtype::f32, "float32"},
                                               {OutDtype::bf16, "bfloat16"},
                                               {OutDtype::f16, "float16"},
                                               {OutDtype::f32, "f32"},
                                               {OutDtype::bf16, "bf16"},
                                               {OutDtype::f16, "f16"}}};

}  // namespace

const char* to_string(RowFormat format) {
  const RowFormatDescriptor* d = find_row_format(format);
  return d != nullptr ? d->name.c_str() : "?";
}
const char* to_string(OutDtype dtype) { return name_of(k_out_dtypes, dtype); }
RowFormat parse_row_format(std::string_view name) {
  if (const RowFormatDescriptor* d = find_row_format(name)) return d->id;
  throw InputError("row format \"" + quoted_value(name) + "\": expected " + row_format_names());
}
OutDtype parse_out_dtype(std::string_view name) { return parse_value(k_out_dtypes, name, Option::out_dtype); }
std::optional<OutDtype> out_dtype_named(std::string_view name) { return find_value(k_out_dtypes, name); }

bool format_matches_config(RowFormat format, TableQuantization quantization) {
  const RowFormatDescriptor* d = find_row_format(format);
  if (d == nullptr) return false;
  const std::string_view name = to_string(quantization);
  return std::find(d->config_quantizations.begin(), d->config_quantizations.end(), name) !=
         d->config_quantizations.end();
}

RowFormat default_row_format(TableQuantization quantization) {
  const std::string_view name = to_string(quantization);
  for (const RowFormat format : known_row_formats())
    if (describe(format).default_for == name) return format;
  return RowFormat::bf16;
}

TableQuantization config_quantization(RowFormat format) {
  const std::string& name = describe(format).config_quantizations.front();
  return parse_table_quantization(name);
}

}  // namespace pleshard
