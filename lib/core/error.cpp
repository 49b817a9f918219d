#include "core/error.hpp"

#include <string_view>

namespace pleshard {

std::string quoted_value(std::string_view value) {
  if (value.size() <= k_quoted_value_bytes) return std::string(value);
  constexpr std::size_t k_shown = k_quoted_value_bytes / 2;
  std::size_t cut = k_shown;
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 letter
  return std::string(value.substr(0, cut)) + "... (" + std::to_string(value.size()) + " bytes)";
}

std::string describe_failed_call(const char* call, const char* file, int line, const std::string& detail) {
  std::string_view path(file);
  if (auto slash = path.rfind('/'); slash != std::string_view::npos) path.remove_prefix(slash + 1);
  return std::string(path) + ":" + std::to_string(line) + ": " + call + " failed: " + detail;
}

}  // namespace pleshard
