#include "core/error.hpp"

#include <string_view>

namespace pleshard {

std::string describe_failed_call(const char* call, const char* file, int line, const std::string& detail) {
  std::string_view path(file);
  if (auto slash = path.rfind('/'); slash != std::string_view::npos) path.remove_prefix(slash + 1);
  return std::string(path) + ":" + std::to_string(line) + ": " + call + " failed: " + detail;
}

}  // namespace pleshard
