#include "format/row_format.hpp"

#include "core/error.hpp"

namespace pleshard {

const char* to_string(RowFormat format) {
  switch (format) {
    case RowFormat::f32: return "f32";
    case RowFormat::bf16: return "bf16";
    case RowFormat::f16: return "f16";
    case RowFormat::fp8: return "fp8";
    case RowFormat::nvfp4: return "nvfp4";
  }
  return "?";
}

const char* to_string(OutDtype dtype) {
  switch (dtype) {
    case OutDtype::f32: return "float32";
    case OutDtype::bf16: return "bfloat16";
    case OutDtype::f16: return "float16";
  }
  return "?";
}

RowFormat parse_row_format(std::string_view name) {
  if (name == "f32" || name == "float32" || name == "F32") return RowFormat::f32;
  if (name == "bf16" || name == "bfloat16" || name == "BF16") return RowFormat::bf16;
  if (name == "f16" || name == "float16" || name == "F16") return RowFormat::f16;
  if (name == "fp8" || name == "float8_e4m3fn" || name == "F8_E4M3") return RowFormat::fp8;
  if (name == "nvfp4") return RowFormat::nvfp4;
  throw InputError("unknown row format \"" + std::string(name) +
                   "\"; expected f32, bf16, f16, fp8 or nvfp4");
}

OutDtype parse_out_dtype(std::string_view name) {
  if (name == "float32" || name == "f32") return OutDtype::f32;
  if (name == "bfloat16" || name == "bf16") return OutDtype::bf16;
  if (name == "float16" || name == "f16") return OutDtype::f16;
  throw InputError("unknown output dtype \"" + std::string(name) +
                   "\"; expected float32, bfloat16 or float16");
}

bool format_matches_config(RowFormat format, TableQuantization quantization) {
  switch (quantization) {
    case TableQuantization::fp8: return format == RowFormat::fp8;
    case TableQuantization::nvfp4: return format == RowFormat::nvfp4;
    case TableQuantization::none:
      return format == RowFormat::f32 || format == RowFormat::bf16 || format == RowFormat::f16;
  }
  return false;
}

}  // namespace pleshard
