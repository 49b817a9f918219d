#pragma once
// The names of an enum's values, one table per enum, read both ways: every to_string and
// parse of the library's enums is a lookup in its table. A value's first entry is its name;
// later entries for the same value are aliases that parsing also accepts.

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace pleshard {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

template <typename E, std::size_t N>
using EnumNames = std::array<EnumName<E>, N>;

template <typename E, std::size_t N>
[[nodiscard]] constexpr const char* name_of(const EnumNames<E, N>& names, E value) {
  for (const auto& entry : names)
    if (entry.value == value) return entry.name;
  return "?";
}

template <typename E, std::size_t N>
[[nodiscard]] constexpr std::optional<E> find_value(const EnumNames<E, N>& names, std::string_view name) {
  for (const auto& entry : names)
    if (name == entry.name) return entry.value;
  return std::nullopt;
}

// "a, b or c" (`last`: " and " for "a, b and c").
[[nodiscard]] inline std::string or_list(std::span<const std::string> names, const char* last = " or ") {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) list += (i == 0 ? "" : i + 1 == names.size() ? last : ", ") + names[i];
  return list;
}

// "a, b or c": each value's name, aliases left out.
template <typename E, std::size_t N>
[[nodiscard]] std::string name_list(const EnumNames<E, N>& names) {
  std::vector<std::string> listed;
  for (const auto& entry : names)
    if (name_of(names, entry.value) == entry.name) listed.emplace_back(entry.name);
  return or_list(listed);
}

// The value named `name`, or InputError "<what> "<name>": expected a, b or c".
template <typename E, std::size_t N>
[[nodiscard]] E parse_value(const EnumNames<E, N>& names, std::string_view name, const std::string& what) {
  if (const auto value = find_value(names, name)) return *value;
  throw InputError(what + " \"" + quoted_value(name) + "\": expected " + name_list(names));
}

}  // namespace pleshard
