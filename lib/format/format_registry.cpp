#include "format/format_registry.hpp"

#include <deque>
#include <mutex>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "kernels/common/row_encode.hpp"

namespace pleshard {

namespace {

// A built-in format's descriptor, every field from its traits.
template <typename Format>
RowFormatDescriptor builtin_descriptor(Format) {
  RowFormatDescriptor d;
  d.id = Format::id;
  d.name = Format::name;
  d.aliases.assign(std::begin(Format::aliases), std::end(Format::aliases));
  d.safetensors_dtype = Format::safetensors_dtype;
  d.config_quantizations.assign(std::begin(Format::config_quantizations), std::end(Format::config_quantizations));
  d.default_for = Format::default_for != nullptr ? Format::default_for : "";
  d.code_bytes = Format::code_bytes;
  d.nan_code = &Format::nan_code;
  d.device_kernels = true;
  d.hooks.row_bytes = [](int head_dim) { return Format::row_bytes(head_dim); };
  d.hooks.scaling = Format::scaling;
  d.hooks.global_scale = Format::global_scale;
  d.hooks.global_scale_for = [](float amax) { return Format::global_scale_for(amax); };
  d.hooks.decode_value = [](const std::uint8_t* row, const std::uint8_t* scales, float global_scale, int j) {
    return kernels::decode_value_as<Format::id>(row, scales, global_scale, j);
  };
  d.hooks.encode_row = [](const float* values, int head_dim, float global_scale, std::uint8_t* row,
                          std::uint8_t* scales) {
    kernels::encode_row(Format::id, values, head_dim, global_scale, row, scales);
  };
  return d;
}

// The formats in registration order, the built-ins first (registered when the registry is
// first used, so a format registered at static initialization still comes after them). A
// deque: descriptors handed out stay where they are as others register.
struct Registry {
  std::mutex lock;
  std::deque<RowFormatDescriptor> formats;
  Registry() {
    kernels::for_each_builtin_format([this](auto format) { formats.push_back(builtin_descriptor(format)); });
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

bool names_format(const RowFormatDescriptor& d, std::string_view name) {
  if (d.name == name) return true;
  for (const auto& alias : d.aliases)
    if (alias == name) return true;
  return false;
}

}  // namespace

RowFormat register_row_format(RowFormatDescriptor descriptor) {
  const kernels::RowFormatHooks& h = descriptor.hooks;
  if (descriptor.name.empty() || h.row_bytes == nullptr || h.global_scale_for == nullptr || h.decode_value == nullptr ||
      h.encode_row == nullptr || descriptor.nan_code == nullptr)
    throw Error("row format \"" + descriptor.name + "\": a name and every hook are required");
  Registry& r = registry();
  const std::lock_guard<std::mutex> guard(r.lock);
  std::vector<std::string> names = descriptor.aliases;
  names.push_back(descriptor.name);
  for (const auto& d : r.formats)
    for (const auto& name : names)
      if (names_format(d, name))
        throw Error("row format \"" + descriptor.name + "\": \"" + name + "\" already names format " + d.name);
  try {
    descriptor.id = kernels::register_format_hooks(descriptor.hooks);
  } catch (const std::length_error& e) {
    throw Error("row format \"" + descriptor.name + "\": " + e.what());
  }
  descriptor.device_kernels = false;  // the kernels instantiate the built-in formats alone
  r.formats.push_back(std::move(descriptor));
  return r.formats.back().id;
}

const RowFormatDescriptor* find_row_format(RowFormat format) {
  for (const auto& d : registry().formats)
    if (d.id == format) return &d;
  return nullptr;
}

const RowFormatDescriptor& describe(RowFormat format) {
  if (const RowFormatDescriptor* d = find_row_format(format)) return *d;
  throw Error("row format id " + std::to_string(static_cast<int>(format)) + " names no format");
}

const RowFormatDescriptor* find_row_format(std::string_view name) {
  for (const auto& d : registry().formats)
    if (names_format(d, name)) return &d;
  return nullptr;
}

std::vector<RowFormat> known_row_formats() {
  std::vector<RowFormat> ids;
  for (const auto& d : registry().formats) ids.push_back(d.id);
  return ids;
}

std::vector<std::string> row_format_name_list() {
  std::vector<std::string> names;
  for (const auto& d : registry().formats) names.push_back(d.name);
  return names;
}

std::string row_format_names() { return or_list(row_format_name_list()); }

}  // namespace pleshard
