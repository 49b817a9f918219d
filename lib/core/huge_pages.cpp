#include "core/huge_pages.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "core/host_memory.hpp"
#include "core/numa_home.hpp"

#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << MAP_HUGE_SHIFT)
#endif
#ifndef MADV_POPULATE_READ  // Linux 5.14
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

namespace pleshard {

namespace {

constexpr std::size_t k_small_page_bytes = 4096;

std::uint64_t read_count(const std::string& path) {
  std::uint64_t n = 0;
  std::ifstream(path) >> n;
  return n;
}

// The word in brackets of a sysfs choice ("always [madvise] never").
std::string chosen(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const auto open = line.find('[');
  const auto close = line.find(']');
  return open == std::string::npos || close < open ? "" : line.substr(open + 1, close - open - 1);
}

// /proc/self/mounts' lines as (directory, type, options).
struct Mount {
  std::string directory, type, options;
};
std::vector<Mount> mounts() {
  std::vector<Mount> all;
  std::ifstream in("/proc/self/mounts");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    Mount m;
    std::string device;
    if (fields >> device >> m.directory >> m.type >> m.options) all.push_back(std::move(m));
  }
  return all;
}

std::string option(const std::string& options, const std::string& key) {
  std::istringstream in(options);
  for (std::string o; std::getline(in, o, ',');)
    if (o.rfind(key + "=", 0) == 0) return o.substr(key.size() + 1);
  return "";
}

// A hugetlbfs mount of 2 MiB pages (its pagesize= option, else the default page size) that
// this process may make files in.
std::filesystem::path writable_hugetlbfs() {
  const bool default_2m = [] {
    std::ifstream in("/proc/meminfo");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("Hugepagesize:", 0) == 0) return std::stoull(line.substr(13)) == 2048;
    return false;
  }();
  for (const Mount& m : mounts()) {
    if (m.type != "hugetlbfs") continue;
    const std::string size = option(m.options, "pagesize");
    if ((size.empty() ? default_2m : size == "2M" || size == "2048k") && ::access(m.directory.c_str(), W_OK) == 0)
      return m.directory;
  }
  return {};
}

std::uint64_t free_hugetlb_pages() {
  const std::string dir = "/sys/kernel/mm/hugepages/hugepages-2048kB/";
  const std::uint64_t free = read_count(dir + "free_hugepages");
  const std::uint64_t promised = read_count(dir + "resv_hugepages");
  return free > promised ? free - promised : 0;
}

// Whether a table of `mapped` bytes asks for 2 MiB pages: one huge page or more, unless a
// test makes the job run as on a machine that offers none.
bool wants_huge_pages(std::size_t mapped) { return mapped % k_huge_page_bytes == 0 && !fault_plan().small_pages; }

// `bytes` (whole 2 MiB pages) mapped at a 2 MiB boundary, which transparent huge pages need
// (only a whole aligned 2 MiB of a mapping can be one): 2 MiB more reserved without access,
// the mapping placed in its aligned part, the rest given back.
void* map_aligned(std::size_t bytes, int flags, int fd) {
  const std::size_t reserved = bytes + k_huge_page_bytes;
  void* room = ::mmap(nullptr, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (room == MAP_FAILED) return MAP_FAILED;
  const auto begin = reinterpret_cast<std::uintptr_t>(room);
  const std::uintptr_t aligned = (begin + k_huge_page_bytes - 1) / k_huge_page_bytes * k_huge_page_bytes;
  void* p = ::mmap(reinterpret_cast<void*>(aligned), bytes, PROT_READ | PROT_WRITE, flags | MAP_FIXED, fd, 0);
  if (p == MAP_FAILED) {
    const int failure = errno;
    ::munmap(room, reserved);
    errno = failure;
    return MAP_FAILED;
  }
  if (aligned > begin) ::munmap(room, aligned - begin);
  const std::uintptr_t end = aligned + bytes;
  if (begin + reserved > end) ::munmap(reinterpret_cast<void*>(end), begin + reserved - end);
  return p;
}

// Asks for transparent huge pages on a mapping not yet written (or, under the fault plan,
// for none even where they are always on).
void advise_pages(void* p, std::size_t bytes) {
  if (bytes % k_huge_page_bytes != 0) return;
  (void)::madvise(p, bytes, fault_plan().small_pages ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
}

bool on_hugetlbfs(int fd) {
  struct statfs fs {};
  return ::fstatfs(fd, &fs) == 0 && static_cast<unsigned long>(fs.f_type) == HUGETLBFS_MAGIC;
}

}  // namespace

std::string HugePageOffer::describe() const {
  return "hugetlb: " + std::to_string(hugetlb_free_pages) + " free 2 MiB pages" +
         (hugetlbfs.empty() ? "" : " (" + hugetlbfs.string() + ")") +
         "; THP: " + (transparent.empty() ? "none" : transparent) + "; /dev/shm: huge=" + shm_huge;
}

HugePageOffer read_huge_page_offer() {
  HugePageOffer offer;
  offer.hugetlb_free_pages = free_hugetlb_pages();
  offer.transparent = chosen("/sys/kernel/mm/transparent_hugepage/enabled");
  offer.shm_huge = "never";
  for (const Mount& m : mounts())
    if (m.directory == "/dev/shm" && !option(m.options, "huge").empty()) offer.shm_huge = option(m.options, "huge");
  // shmem_enabled's "force" and "deny" stand over every tmpfs mount's huge= option.
  const std::string shmem = chosen("/sys/kernel/mm/transparent_hugepage/shmem_enabled");
  if (shmem == "force" || shmem == "deny") offer.shm_huge = shmem + " (shmem_enabled)";
  offer.hugetlbfs = writable_hugetlbfs();
  return offer;
}

std::uint64_t free_hugetlb_bytes() { return free_hugetlb_pages() * k_huge_page_bytes; }

std::size_t table_mapping_bytes(std::size_t bytes) {
  const std::size_t page = bytes >= k_huge_page_bytes ? k_huge_page_bytes : k_small_page_bytes;
  return (std::max<std::size_t>(bytes, 1) + page - 1) / page * page;
}

std::uint8_t* map_private_table(std::size_t mapped, const std::string& what) {
  void* p = MAP_FAILED;
  const bool huge = wants_huge_pages(mapped);
  // Reserved pages, where enough are free: the mapping takes them now or fails (then
  // transparent ones are asked for).
  if (huge && free_hugetlb_pages() * k_huge_page_bytes >= mapped)
    p = map_aligned(mapped, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB, -1);
  if (p == MAP_FAILED) {
    const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    p = huge ? map_aligned(mapped, flags, -1) : ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (p != MAP_FAILED) advise_pages(p, mapped);
  }
  if (p == MAP_FAILED)
    throw InputError(what + ": cannot map " + std::to_string(mapped) + " bytes of host memory: " +
                     std::strerror(errno) + " (" + std::to_string(available_host_bytes()) + " available)");
  prefer_numa_home(p, mapped);
  return static_cast<std::uint8_t*>(p);
}

std::vector<std::filesystem::path> shared_table_directories(std::size_t bytes) {
  std::vector<std::filesystem::path> directories;
  if (wants_huge_pages(bytes) && free_hugetlb_pages() * k_huge_page_bytes >= bytes) {
    const std::filesystem::path hugetlbfs = writable_hugetlbfs();
    if (!hugetlbfs.empty()) directories.push_back(hugetlbfs);
  }
  directories.emplace_back("/dev/shm");
  return directories;
}

std::uint8_t* map_shared_table(int fd, std::size_t bytes, bool make) {
  const bool hugetlb = on_hugetlbfs(fd);
  if (make && ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) return nullptr;
  const bool huge = bytes % k_huge_page_bytes == 0;
  void* p =
      huge ? map_aligned(bytes, MAP_SHARED, fd) : ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return nullptr;  // on hugetlbfs: its reserved pages were taken meanwhile
  // Every rank's mapping asks: a page of a shared file is mapped whole only where the
  // mapping that reads it allows huge pages.
  if (!hugetlb) advise_pages(p, bytes);
  if (make) prefer_numa_home(p, bytes);
  // The maker takes every page now, through the mapping so that the advice and the NUMA
  // home count (posix_fallocate takes 4 KiB pages wherever /dev/shm says huge=advise): a node
  // short of memory is refused here, not a SIGBUS at the first write. The others, mapping
  // it once it is made, map every page now: no step waits on a fault, and the report
  // measures the whole mapping. Kernels before 5.14: /dev/shm reserved by posix_fallocate
  // (hugetlbfs by the mapping), pages mapped as they are read.
  int failure = ::madvise(p, bytes, make ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) == 0 ? 0 : errno;
  if (failure == EINVAL) failure = make && !hugetlb ? ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)) : 0;
  if (failure != 0) {
    ::munmap(p, bytes);
    errno = failure;
    return nullptr;
  }
  return static_cast<std::uint8_t*>(p);
}

}  // namespace pleshard
