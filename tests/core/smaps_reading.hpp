#pragma once
// The tests' own reading of /proc/self/smaps, apart from core/page_use's: the one mapping
// that holds an address, with the fields that say how its pages are.

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace pleshard::testing_support {

struct SmapsMapping {
  std::uint64_t bytes = 0;            // end - start
  std::uint64_t resident_bytes = 0;   // Rss: the pages this process has mapped now
  std::uint64_t anon_huge_bytes = 0;  // AnonHugePages
  std::uint64_t shmem_pmd_bytes = 0;  // ShmemPmdMapped
  std::uint64_t hugetlb_bytes = 0;    // Private_Hugetlb + Shared_Hugetlb
  std::uint64_t kernel_page_kb = 0;   // KernelPageSize
  std::string flags;                  // VmFlags, space-separated
  std::string file;                   // the path the first line names, if any
  [[nodiscard]] double huge_share() const {
    return bytes == 0
               ? 0
               : static_cast<double>(anon_huge_bytes + shmem_pmd_bytes + hugetlb_bytes) / static_cast<double>(bytes);
  }
  [[nodiscard]] bool flagged(const std::string& flag) const {
    return (" " + flags + " ").find(" " + flag + " ") != std::string::npos;
  }
};

inline SmapsMapping smaps_mapping_of(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  SmapsMapping found;
  bool in = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long begin = 0;
    unsigned long end = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s", &begin, &end, perms) == 3) {
      if (in) break;
      in = begin <= at && at < end;
      if (in) {
        found.bytes = end - begin;
        const auto slash = line.find('/');
        if (slash != std::string::npos) found.file = line.substr(slash);
      }
      continue;
    }
    if (!in) continue;
    std::istringstream fields(line);
    std::string key;
    std::uint64_t kb = 0;
    fields >> key;
    if (key == "VmFlags:") {
      std::getline(fields, found.flags);
      found.flags.erase(0, found.flags.find_first_not_of(' '));
      continue;
    }
    fields >> kb;
    if (key == "Rss:") found.resident_bytes = kb * 1024;
    if (key == "AnonHugePages:") found.anon_huge_bytes = kb * 1024;
    if (key == "ShmemPmdMapped:") found.shmem_pmd_bytes = kb * 1024;
    if (key == "Private_Hugetlb:" || key == "Shared_Hugetlb:") found.hugetlb_bytes += kb * 1024;
    if (key == "KernelPageSize:") found.kernel_page_kb = kb;
  }
  return found;
}

// The word in brackets of a sysfs choice ("always [madvise] never"); "" where there is none.
inline std::string sysfs_choice(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const auto open = line.find('[');
  const auto close = line.find(']');
  return open == std::string::npos || close == std::string::npos ? "" : line.substr(open + 1, close - open - 1);
}

}  // namespace pleshard::testing_support
