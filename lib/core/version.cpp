#include "core/version.hpp"

#include "pleshard_build_version.hpp"

namespace pleshard {

BuildVersion build_version() { return {PLESHARD_BUILD_VERSION, PLESHARD_BUILD_COMMIT, PLESHARD_BUILD_MODIFIED != 0}; }

std::string version_string() {
  const BuildVersion v = build_version();
  if (v.commit.empty()) return v.version;
  return v.version + "+g" + v.commit + (v.modified ? ".modified" : "");
}

}  // namespace pleshard
