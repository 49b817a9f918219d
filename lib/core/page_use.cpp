#include "core/page_use.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "core/numa_home.hpp"

namespace pleshard {

namespace {

// The kB of a field line ("AnonHugePages:      4096 kB"), where it is one of `keys`.
bool huge_kilobytes(const std::string& line, std::uint64_t& kilobytes) {
  static const char* const keys[] = {
      "AnonHugePages:", "ShmemPmdMapped:", "FilePmdMapped:", "Shared_Hugetlb:", "Private_Hugetlb:"};
  for (const char* key : keys) {
    const std::string k(key);
    if (line.compare(0, k.size(), k) != 0) continue;
    kilobytes = std::stoull(line.substr(k.size()));
    return true;
  }
  return false;
}

// VmFlags' two-letter flags: ht (hugetlb), hg (MADV_HUGEPAGE), nh (MADV_NOHUGEPAGE), sh (shared).
void read_flags(const std::string& line, PageAsk& ask, bool& shared) {
  std::istringstream flags(line.substr(line.find(':') + 1));
  for (std::string flag; flags >> flag;) {
    if (flag == "ht") ask = PageAsk::hugetlb;
    if (flag == "hg" && ask != PageAsk::hugetlb) ask = PageAsk::transparent;
    if (flag == "nh" && ask == PageAsk::system) ask = PageAsk::small;
    if (flag == "sh") shared = true;
  }
}

}  // namespace

const char* to_string(PageAsk ask) {
  switch (ask) {
    case PageAsk::small:
      return "small";
    case PageAsk::system:
      return "system";
    case PageAsk::transparent:
      return "transparent";
    case PageAsk::hugetlb:
      return "hugetlb";
  }
  return "?";
}

ProcessPages::ProcessPages() {
  std::ifstream smaps("/proc/self/smaps");
  for (std::string line; std::getline(smaps, line);) {
    unsigned long begin = 0;
    unsigned long end = 0;
    int consumed = 0;
    // A mapping's first line: "7f0c2a000000-7f0c2c000000 rw-p ...".
    if (std::sscanf(line.c_str(), "%lx-%lx %n", &begin, &end, &consumed) == 2 && consumed > 0) {
      mappings_.push_back({begin, end, 0, PageAsk::system, false});
      continue;
    }
    if (mappings_.empty()) continue;
    Mapping& m = mappings_.back();
    std::uint64_t kilobytes = 0;
    if (huge_kilobytes(line, kilobytes))
      m.huge_bytes += kilobytes * 1024;
    else if (line.rfind("VmFlags:", 0) == 0)
      read_flags(line, m.ask, m.shared);
  }
}

PageUse ProcessPages::use_of(const void* p, std::size_t bytes) const {
  PageUse use;
  use.bytes = bytes;
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t end = begin + bytes;
  bool first = true;
  double huge = 0;
  for (const Mapping& m : mappings_) {
    const std::uintptr_t from = std::max(begin, m.begin);
    const std::uintptr_t to = std::min(end, m.end);
    if (from >= to) continue;
    huge += static_cast<double>(m.huge_bytes) * static_cast<double>(to - from) / static_cast<double>(m.end - m.begin);
    use.ask = first ? m.ask : std::min(use.ask, m.ask);
    use.shared = use.shared || m.shared;
    use.known = true;
    first = false;
  }
  use.huge_bytes = std::min<std::uint64_t>(bytes, static_cast<std::uint64_t>(huge + 0.5));
  use.node_bytes = bytes_by_numa_node(p, bytes);
  return use;
}

}  // namespace pleshard
