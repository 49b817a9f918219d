#include "format/row_format.hpp"

#include "core/enum_names.hpp"
#include "core/option_names.hpp"

namespace pleshard {

namespace {

constexpr EnumNames<RowFormat, 18> k_row_formats{{{RowFormat::f32, "f32"},
                                                  {RowFormat::bf16, "bf16"},
                                                  {RowFormat::f16, "f16"},
                                                  {RowFormat::fp8, "fp8"},
                                                  {RowFormat::nvfp4, "nvfp4"},
                                                  {RowFormat::fp8_e8m0, "fp8_e8m0"},
                                                  {RowFormat::f32, "float32"},
                                                  {RowFormat::f32, "F32"},
                                                  {RowFormat::bf16, "bfloat16"},
                                                  {RowFormat::bf16, "BF16"},
                                                  {RowFormat::f16, "float16"},
                                                  {RowFormat::f16, "F16"},
                                                  {RowFormat::fp8, "float8_e4m3fn"},
                                                  {RowFormat::fp8, "F8_E4M3"},
                                                  {RowFormat::nvfp4, "NVFP4"},
                                                  {RowFormat::fp8_e8m0, "fp8-e8m0"},
                                                  {RowFormat::fp8_e8m0, "mxfp8"},
                                                  {RowFormat::fp8_e8m0, "MXFP8"}}};

constexpr EnumNames<OutDtype, 6> k_out_dtypes{{{OutDtype::f32, "float32"},
                                               {OutDtype::bf16, "bfloat16"},
                                               {OutDtype::f16, "float16"},
                                               {OutDtype::f32, "f32"},
                                               {OutDtype::bf16, "bf16"},
                                               {OutDtype::f16, "f16"}}};

}  // namespace

const char* to_string(RowFormat format) { return name_of(k_row_formats, format); }
const char* to_string(OutDtype dtype) { return name_of(k_out_dtypes, dtype); }
RowFormat parse_row_format(std::string_view name) { return parse_value(k_row_formats, name, "row format"); }
OutDtype parse_out_dtype(std::string_view name) { return parse_value(k_out_dtypes, name, Option::out_dtype); }
std::optional<OutDtype> out_dtype_named(std::string_view name) { return find_value(k_out_dtypes, name); }

bool format_matches_config(RowFormat format, TableQuantization quantization) {
  switch (quantization) {
    case TableQuantization::fp8:  // E4M3 codes, scaled per table or per block of 32 (the checkpoint says)
      return format == RowFormat::fp8 || format == RowFormat::fp8_e8m0;
    case TableQuantization::nvfp4:
      return format == RowFormat::nvfp4;
    case TableQuantization::fp8_e8m0:  // Engram: E4M3 codes with E8M0 block scales, or unquantized rows
      return format == RowFormat::fp8_e8m0 || format == RowFormat::f32 || format == RowFormat::bf16 ||
             format == RowFormat::f16;
    case TableQuantization::none:
      return format == RowFormat::f32 || format == RowFormat::bf16 || format == RowFormat::f16;
  }
  return false;
}

}  // namespace pleshard
