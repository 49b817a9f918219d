#pragma once
// pleshard's version: CMake's project version and, when built from a git checkout, the
// commit (12 hex digits) and whether tracked files differed from it.

#include <string>

namespace pleshard {

struct BuildVersion {
  std::string version;  // "0.1.0"
  std::string commit;   // "" outside a checkout
  bool modified = false;
};

[[nodiscard]] BuildVersion build_version();

// One string for reports and outputs: "0.1.0", "0.1.0+g<commit>" or "0.1.0+g<commit>.modified".
[[nodiscard]] std::string version_string();

}  // namespace pleshard
