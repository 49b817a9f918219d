#include "core/host_memory.hpp"

#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <exception>
#include <fstream>
#include <string>
#include <utility>

#include "core/huge_pages.hpp"

namespace pleshard {

namespace {

std::uint64_t mem_available() {
  std::ifstream in("/proc/meminfo");
  const std::string key = "MemAvailable:";
  for (std::string line; std::getline(in, line);)
    if (line.compare(0, key.size(), key) == 0) return std::stoull(line.substr(key.size())) * 1024;  // in kB
  return 0;
}

std::uint64_t read_number(const std::string& path) {
  std::string text;
  if (!(std::ifstream(path) >> text)) return 0;
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    return 0;  // "max": no limit
  }
}

// What the process's memory cgroup still allows, its limit less its usage (v2: memory.max
// and memory.current; v1: memory.limit_in_bytes and memory.usage_in_bytes); 0 when it sets
// no limit or cannot be read. A Slurm job's cgroup is often far below MemAvailable.
std::uint64_t cgroup_headroom() {
  std::ifstream self("/proc/self/cgroup");
  std::uint64_t limit = 0;
  std::uint64_t usage = 0;
  for (std::string line; std::getline(self, line) && limit == 0;) {
    if (line.rfind("0::", 0) == 0) {
      const std::string dir = "/sys/fs/cgroup" + line.substr(3);
      limit = read_number(dir + "/memory.max");
      usage = read_number(dir + "/memory.current");
    } else if (const auto at = line.find(":memory:"); at != std::string::npos) {
      const std::string dir = "/sys/fs/cgroup/memory" + line.substr(at + 8);
      limit = read_number(dir + "/memory.limit_in_bytes");
      usage = read_number(dir + "/memory.usage_in_bytes");
    }
  }
  // v1 says "no limit" with a number near 2^63.
  if (limit == 0 || limit >= (std::uint64_t{1} << 62)) return 0;
  return limit > usage ? limit - usage : 1;  // 1: at its limit (0 would mean unknown)
}

}  // namespace

std::uint64_t available_host_bytes() {
  const std::uint64_t available = mem_available();
  const std::uint64_t headroom = cgroup_headroom();
  if (available == 0 || headroom == 0) return available == 0 ? headroom : available;
  return std::min(available, headroom);
}

std::uint64_t available_table_bytes() {
  const std::uint64_t available = available_host_bytes();
  return available == 0 ? 0 : available + free_hugetlb_bytes();
}

std::uint64_t peak_resident_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux: KiB
}

HostBytes::HostBytes(std::size_t size, const std::string& what)
    : data_(size == 0 ? nullptr : map_private_table(table_mapping_bytes(size), what)), size_(size) {}

HostBytes::~HostBytes() {
  if (data_ != nullptr) ::munmap(data_, table_mapping_bytes(size_));
}

HostBytes::HostBytes(HostBytes&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

HostBytes& HostBytes::operator=(HostBytes&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  return *this;
}

}  // namespace pleshard
