#pragma once
// Host memory for tables read at random — a rank's own rows (the host tier, the pinned
// tier's mapping, the disk tier's block scales) and a node's shared copy of them — on 2 MiB
// pages where the machine offers them: a random row read from tens of GB of 4 KiB pages
// misses the TLB nearly every time, and the page walk, not the copy, bounds the reads.
// Reserved pages (hugetlb) where enough are free, else transparent huge pages asked for
// with madvise before the first byte is written (and before any page-locking), else 4 KiB
// pages. Every table's memory comes through here; what it got is measured afterwards
// (core/page_use.hpp), never assumed from what was asked.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace pleshard {

inline constexpr std::size_t k_huge_page_bytes = std::size_t{2} << 20;

// What the machine offers for 2 MiB pages, as /proc and /sys say now.
struct HugePageOffer {
  std::uint64_t hugetlb_free_pages = 0;  // reserved 2 MiB pages free and not promised to a mapping
  std::string transparent;               // transparent_hugepage/enabled: always, madvise, never ("" none)
  std::string shm_huge;                  // /dev/shm's huge= mount option: never (the default), advise, ...
  std::filesystem::path hugetlbfs;       // a hugetlbfs mount of 2 MiB pages this process may write ("" none)
  // One line for the report: "hugetlb: 0 free 2 MiB pages; THP: madvise; /dev/shm: huge=never".
  [[nodiscard]] std::string describe() const;
};
[[nodiscard]] HugePageOffer read_huge_page_offer();

// Bytes of the reserved 2 MiB pages free for new mappings (0 where none are reserved): table
// memory the fit checks count beside MemAvailable, which leaves them out.
[[nodiscard]] std::uint64_t free_hugetlb_bytes();

// A mapping's length for `bytes` of a table: whole 2 MiB pages from one huge page on (a
// smaller table keeps 4 KiB pages, so that a table of a few rows does not take 2 MiB), else
// whole 4 KiB pages; at least one page.
[[nodiscard]] std::size_t table_mapping_bytes(std::size_t bytes);

// A private mapping of `mapped` bytes (table_mapping_bytes) for one table, not yet written
// (its pages read as zeros), at a 2 MiB boundary, on the huge pages offered, and on this
// process's NUMA home node where it has one (core/numa_home.hpp); munmap gives it back.
// InputError naming `what` where the host cannot map it. HostBytes (core/host_memory.hpp)
// owns one.
[[nodiscard]] std::uint8_t* map_private_table(std::size_t mapped, const std::string& what);

// Where a node's shared table memory (core/node_segment.hpp) of `bytes` (table_mapping_bytes)
// can be made, in order: a hugetlbfs mount whose free 2 MiB pages hold it, then /dev/shm.
[[nodiscard]] std::vector<std::filesystem::path> shared_table_directories(std::size_t bytes);

// Maps `fd`, a node's shared table memory of `bytes` (table_mapping_bytes), read and write,
// at a 2 MiB boundary, asking for transparent huge pages where it is not on hugetlbfs, every
// page mapped now. Its maker (`make`) sizes it first and writes every page once, on its NUMA
// home node (a node short of memory is refused here, not a SIGBUS at the first write); the
// others map it once it is made. Null where it cannot, errno saying why.
[[nodiscard]] std::uint8_t* map_shared_table(int fd, std::size_t bytes, bool make);

}  // namespace pleshard
