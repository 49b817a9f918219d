#pragma once
// The row formats this program knows, by name: the built-in ones, described from their
// traits (kernels/common/formats/), and any that code linked in registers at static
// initialization (a RowFormatRegistration). Every format name read (--format, a native
// checkpoint's format attribute) and every list of accepted names is read from here.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/common/row_decode.hpp"

namespace pleshard {

using kernels::RowFormat;

struct RowFormatDescriptor {
  RowFormat id{};  // given on registration
  std::string name;
  std::vector<std::string> aliases;  // names parsing also accepts
  // Checkpoints: the safetensors dtype of its codes; the config quantizations (model_config's
  // names: "none", "float8_e4m3fn", ...) whose tables it may store, the first the one a
  // config made for it names; and the quantization it is the default format of ("": none).
  std::string safetensors_dtype = "U8";
  std::vector<std::string> config_quantizations{"none"};
  std::string default_for;
  // Anomalies (format/row_anomalies.hpp): the bytes of one code, and whether a code is a NaN.
  std::size_t code_bytes = 1;
  bool (*nan_code)(const std::uint8_t* code) = [](const std::uint8_t*) { return false; };
  // Whether GPU tiers can decode its tables (the built-in formats' kernels); a format without
  // them is served from host memory or disk alone.
  bool device_kernels = false;
  // Its layout, decode and encode on the host: every host path reaches a registered format
  // through these (the built-ins' come from their traits).
  kernels::RowFormatHooks hooks;
};

// Registers `descriptor` (its id is ignored) and returns the id it gets. Throws Error where a
// hook is missing, where its name or an alias is taken, or where every id is.
RowFormat register_row_format(RowFormatDescriptor descriptor);

// Registers a format at static initialization: `static const RowFormatRegistration toy{d};`
// in a file linked in, and the program accepts d.name wherever it takes a format.
struct RowFormatRegistration {
  explicit RowFormatRegistration(RowFormatDescriptor descriptor) : format(register_row_format(std::move(descriptor))) {}
  RowFormat format;
};

// The descriptor of `format` (an id no format has: Error), or nullptr.
[[nodiscard]] const RowFormatDescriptor& describe(RowFormat format);
[[nodiscard]] const RowFormatDescriptor* find_row_format(RowFormat format);
// The format named `name` (a name or an alias), or nullptr.
[[nodiscard]] const RowFormatDescriptor* find_row_format(std::string_view name);
// Every format, the built-in ones first, in the order of their list.
[[nodiscard]] std::vector<RowFormat> known_row_formats();
// Every format's name, aliases left out: {"f32", "bf16", ...}, and as one phrase, "f32, bf16,
// f16, fp8, nvfp4 or fp8_e8m0".
[[nodiscard]] std::vector<std::string> row_format_name_list();
[[nodiscard]] std::string row_format_names();

}  // namespace pleshard
