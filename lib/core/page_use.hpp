#pragma once
// The pages behind a range of this process's memory, as the kernel says now: the bytes that
// 2 MiB pages map (/proc/self/smaps: a mapping's AnonHugePages, ShmemPmdMapped and
// FilePmdMapped — transparent huge pages — and its hugetlb pages), how the mapping asks for
// its pages (its VmFlags), and the NUMA nodes its resident pages lie on. What the report says
// of a table's pages is measured here, never taken from what was asked.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pleshard {

// How a mapping asks for its pages, weakest first: refuses transparent huge pages
// (MADV_NOHUGEPAGE), leaves them to the system's setting (transparent_hugepage/enabled,
// /dev/shm's huge=), asks for them (MADV_HUGEPAGE), is made of reserved ones (hugetlb).
enum class PageAsk { small, system, transparent, hugetlb };
[[nodiscard]] const char* to_string(PageAsk ask);

struct PageUse {
  std::uint64_t bytes = 0;                // of the range
  std::uint64_t huge_bytes = 0;           // of them mapped by 2 MiB pages
  PageAsk ask = PageAsk::system;          // the weakest of the mappings that hold the range
  bool shared = false;                    // in a shared mapping (a node's segment)
  bool known = false;                     // smaps named a mapping that holds it (not: unreadable)
  std::vector<std::uint64_t> node_bytes;  // resident bytes by NUMA node (index = node); empty: unknown
  [[nodiscard]] double huge_share() const {
    return bytes > 0 ? static_cast<double>(huge_bytes) / static_cast<double>(bytes) : 0;
  }
};

// One reading of /proc/self/smaps.
class ProcessPages {
 public:
  ProcessPages();

  // The pages of [p, p + bytes). A mapping that holds more than the range (two tables side by
  // side may become one) counts its huge pages in proportion to the part the range is of it.
  [[nodiscard]] PageUse use_of(const void* p, std::size_t bytes) const;

 private:
  struct Mapping {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    std::uint64_t huge_bytes = 0;
    PageAsk ask = PageAsk::system;
    bool shared = false;
  };
  std::vector<Mapping> mappings_;  // in address order
};

}  // namespace pleshard
