#include "core/host_memory.hpp"

#include <sys/resource.h>

#include <fstream>
#include <string>

namespace pleshard {

std::uint64_t available_host_bytes() {
  std::ifstream in("/proc/meminfo");
  const std::string key = "MemAvailable:";
  for (std::string line; std::getline(in, line);)
    if (line.compare(0, key.size(), key) == 0) return std::stoull(line.substr(key.size())) * 1024;  // in kB
  return 0;
}

std::uint64_t peak_resident_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux: KiB
}

}  // namespace pleshard
