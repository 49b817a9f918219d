// Tables' host memory on 2 MiB pages (core/huge_pages.hpp) and the measure of it
// (core/page_use.hpp), each checked against this test's own reading of /proc/self/smaps:
// transparent huge pages where the machine offers them; none under the fault plan's small
// pages (as where none are offered) and for tables under 2 MiB; reserved pages first where
// the test may reserve some (root), transparent ones where too few are free; a node's
// shared segment on a tmpfs that says huge=advise, on hugetlbfs, and on one that offers
// nothing. What the tests mount lies in a mount namespace of their own, and the count of
// reserved pages is put back: the machine is left as it was.

#include <gtest/gtest.h>
#include <mpi.h>

#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/fault_plan.hpp"
#include "core/host_memory.hpp"
#include "core/huge_pages.hpp"
#include "core/node_segment.hpp"
#include "core/page_use.hpp"
#include "smaps_reading.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

constexpr std::size_t k_table_bytes = std::size_t{128} << 20;

// Written whole, as a load writes a table, and read back.
void fill_and_check(std::uint8_t* p, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += 4096) p[i] = static_cast<std::uint8_t>(i / 4096 * 7 + 1);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < bytes; i += 4096) wrong += p[i] != static_cast<std::uint8_t>(i / 4096 * 7 + 1);
  EXPECT_EQ(wrong, 0u);
}

struct SmallPagesPlan {
  SmallPagesPlan() {
    FaultPlan plan;
    plan.small_pages = true;
    set_fault_plan(plan);
  }
  ~SmallPagesPlan() { set_fault_plan({}); }
};

TEST(HugePages, ATableLiesOnTransparentHugePagesWhereTheMachineOffersThem) {
  const std::string thp = sysfs_choice("/sys/kernel/mm/transparent_hugepage/enabled");
  if (thp != "always" && thp != "madvise")
    GTEST_SKIP() << "this machine offers no transparent huge pages (transparent_hugepage/enabled: "
                 << (thp.empty() ? "absent" : thp) << "): only the fallback to small pages is checked here";
  HostBytes table(k_table_bytes, "test table");
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(table.data()) % k_huge_page_bytes, 0u) << "not at a 2 MiB boundary";
  fill_and_check(table.data(), table.size());
  const SmapsMapping mapping = smaps_mapping_of(table.data());
  const PageUse use = ProcessPages().use_of(table.data(), table.size());
  // With "madvise" only a mapping that asked gets them: this fails where the advice is gone.
  EXPECT_GT(mapping.huge_share(), 0.9) << "THP " << thp << ": AnonHugePages " << mapping.anon_huge_bytes << " of "
                                       << mapping.bytes << " bytes (VmFlags: " << mapping.flags << ")";
  EXPECT_NEAR(use.huge_share(), mapping.huge_share(), 0.01);
  EXPECT_EQ(use.bytes, k_table_bytes);
  EXPECT_FALSE(use.shared);
  if (mapping.kernel_page_kb != 2048) {  // not on reserved pages (none were free)
    EXPECT_TRUE(mapping.flagged("hg")) << mapping.flags;
    EXPECT_EQ(use.ask, PageAsk::transparent);
  }
}

TEST(HugePages, NoneUnderTheFaultPlansSmallPages) {
  const SmallPagesPlan small;
  HostBytes table(k_table_bytes, "test table");
  fill_and_check(table.data(), table.size());
  const SmapsMapping mapping = smaps_mapping_of(table.data());
  const PageUse use = ProcessPages().use_of(table.data(), table.size());
  EXPECT_EQ(mapping.huge_share(), 0.0) << mapping.flags;
  EXPECT_EQ(use.huge_bytes, 0u);
  EXPECT_EQ(use.ask, PageAsk::small);  // refused even where they are always on
  EXPECT_EQ(mapping.kernel_page_kb, 4u);
}

TEST(HugePages, ATableUnderOneHugePageKeepsSmallPages) {
  HostBytes table(100 * 1024, "test table");
  fill_and_check(table.data(), table.size());
  const PageUse use = ProcessPages().use_of(table.data(), table.size());
  EXPECT_TRUE(use.known);
  EXPECT_EQ(use.huge_bytes, 0u);
  EXPECT_EQ(use.ask, PageAsk::system);
  EXPECT_EQ(table_mapping_bytes(table.size()), std::size_t{100 * 1024});
  EXPECT_EQ(table_mapping_bytes(k_huge_page_bytes + 1), 2 * k_huge_page_bytes);
}

TEST(HugePages, MemoryTheKernelNamesNoMappingOfIsNotTakenForSmallPages) {
  void* p = ::mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  ::munmap(p, 1 << 20);
  EXPECT_FALSE(ProcessPages().use_of(p, 1 << 20).known);
}

// 2 MiB pages reserved for one test, the machine's count put back when it ends.
class ReservedPages {
 public:
  explicit ReservedPages(std::uint64_t more) : before_(count()) {
    std::ofstream(k_path) << before_ + more << std::flush;
    reserved_ = count() >= before_ + more;
  }
  ~ReservedPages() { std::ofstream(k_path) << before_ << std::flush; }
  ReservedPages(const ReservedPages&) = delete;
  ReservedPages& operator=(const ReservedPages&) = delete;
  [[nodiscard]] bool reserved() const { return reserved_; }

 private:
  static constexpr const char* k_path = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
  static std::uint64_t count() {
    std::uint64_t n = 0;
    std::ifstream(k_path) >> n;
    return n;
  }
  std::uint64_t before_;
  bool reserved_ = false;
};

TEST(HugePages, ReservedPagesFirstThenTransparentOnesWhereTooFewAreFree) {
  const std::uint64_t before = free_hugetlb_bytes();
  {
    const ReservedPages pages(k_table_bytes / k_huge_page_bytes + 2);
    if (!pages.reserved()) GTEST_SKIP() << "cannot reserve 2 MiB pages here (vm.nr_hugepages needs root)";
    // The fit checks count them (MemAvailable leaves them out); MemAvailable may move a little
    // between the two readings.
    EXPECT_GE(free_hugetlb_bytes(), k_table_bytes);
    EXPECT_NEAR(static_cast<double>(available_table_bytes() - available_host_bytes()),
                static_cast<double>(free_hugetlb_bytes()), 64 << 20);
    HostBytes table(k_table_bytes, "test table");
    fill_and_check(table.data(), table.size());
    const SmapsMapping mapping = smaps_mapping_of(table.data());
    EXPECT_EQ(mapping.kernel_page_kb, 2048u);
    EXPECT_EQ(mapping.hugetlb_bytes, k_table_bytes);
    const PageUse use = ProcessPages().use_of(table.data(), table.size());
    EXPECT_EQ(use.ask, PageAsk::hugetlb);
    EXPECT_EQ(use.huge_bytes, k_table_bytes);
    // A second table finds too few free: transparent pages, or small ones, never a failure.
    HostBytes second(k_table_bytes, "test table");
    fill_and_check(second.data(), second.size());
    EXPECT_NE(smaps_mapping_of(second.data()).kernel_page_kb, 2048u);
    EXPECT_NE(ProcessPages().use_of(second.data(), second.size()).ask, PageAsk::hugetlb);
  }
  EXPECT_EQ(free_hugetlb_bytes(), before) << "the reserved pages were not all given back";
}

// What a test mounts, in a mount namespace of this thread's own (root): seen by no other
// process, gone when it is unmounted or the process ends.
class TestMount {
 public:
  TestMount(const std::string& type, const std::filesystem::path& at, const std::string& options) : at_(at) {
    static const bool own =
        ::unshare(CLONE_NEWNS) == 0 && ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
    mounted_ = own && ::mount(type.c_str(), at.c_str(), type.c_str(), 0, options.c_str()) == 0;
    if (!mounted_)
      why_ = std::string(own ? "mount " + type + " at " + at.string() : "unshare") + ": " + std::strerror(errno);
  }
  ~TestMount() {
    if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
  }
  TestMount(const TestMount&) = delete;
  TestMount& operator=(const TestMount&) = delete;
  [[nodiscard]] bool mounted() const { return mounted_; }
  [[nodiscard]] const std::string& why() const { return why_; }

 private:
  std::filesystem::path at_;
  bool mounted_ = false;
  std::string why_;
};

TEST(HugePages, ANodesSegmentOnATmpfsThatAdvisesHugePages) {
  const TestMount shm("tmpfs", "/dev/shm", "huge=advise,size=512m");
  if (!shm.mounted()) GTEST_SKIP() << "needs a mount namespace of its own (root): " << shm.why();
  const NodeSegment segment(MPI_COMM_SELF, k_table_bytes, "test segment");
  ASSERT_TRUE(segment.maker());
  fill_and_check(segment.data(), segment.size());
  const SmapsMapping mapping = smaps_mapping_of(segment.data());
  EXPECT_EQ(mapping.file.rfind("/dev/shm/", 0), 0u) << mapping.file;
  // huge=advise gives them to a mapping that asks, written through it (not posix_fallocate).
  EXPECT_GT(mapping.huge_share(), 0.9) << "ShmemPmdMapped " << mapping.shmem_pmd_bytes << " of " << mapping.bytes;
  const PageUse use = ProcessPages().use_of(segment.data(), segment.size());
  EXPECT_NEAR(use.huge_share(), mapping.huge_share(), 0.01);
  EXPECT_TRUE(use.shared);
  EXPECT_EQ(use.ask, PageAsk::transparent);
}

TEST(HugePages, ANodesSegmentWhereNothingIsOffered) {
  const TestMount shm("tmpfs", "/dev/shm", "huge=never,size=512m");
  if (!shm.mounted()) GTEST_SKIP() << "needs a mount namespace of its own (root): " << shm.why();
  const NodeSegment segment(MPI_COMM_SELF, k_table_bytes, "test segment");
  fill_and_check(segment.data(), segment.size());
  EXPECT_EQ(smaps_mapping_of(segment.data()).huge_share(), 0.0);
  EXPECT_EQ(ProcessPages().use_of(segment.data(), segment.size()).huge_bytes, 0u);
}

TEST(HugePages, ANodesSegmentOnReservedPagesOfAHugetlbfsMount) {
  char dir[] = "/tmp/pleshard-hugetlbfs.XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  {
    const ReservedPages pages(k_table_bytes / k_huge_page_bytes + 2);
    const TestMount hugetlbfs("hugetlbfs", dir, "pagesize=2M");
    if (!pages.reserved() || !hugetlbfs.mounted()) {
      ::rmdir(dir);
      GTEST_SKIP() << "needs root: " << (pages.reserved() ? hugetlbfs.why() : "vm.nr_hugepages");
    }
    const NodeSegment segment(MPI_COMM_SELF, k_table_bytes, "test segment");
    fill_and_check(segment.data(), segment.size());
    const SmapsMapping mapping = smaps_mapping_of(segment.data());
    EXPECT_EQ(mapping.kernel_page_kb, 2048u) << mapping.file;
    EXPECT_EQ(mapping.hugetlb_bytes, k_table_bytes);
    EXPECT_TRUE(mapping.file.ends_with(" (deleted)")) << mapping.file << ": a name left after every rank mapped it";
    const PageUse use = ProcessPages().use_of(segment.data(), segment.size());
    EXPECT_EQ(use.ask, PageAsk::hugetlb);
    EXPECT_EQ(use.huge_bytes, k_table_bytes);
    EXPECT_TRUE(use.shared);
  }
  EXPECT_EQ(::rmdir(dir), 0) << dir;
}

}  // namespace
