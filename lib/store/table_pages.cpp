#include "store/table_pages.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "core/mpi_check.hpp"
#include "core/numa_home.hpp"
#include "core/page_use.hpp"
#include "core/rank_reduction.hpp"

namespace pleshard {

namespace {

// A rank's values of one table, in the forms the reduction takes: minima as maxima of their
// negatives, a rank holding none of the table (or no home) giving what never wins.
struct RankTable {
  std::int64_t holds = 0;
  std::int64_t bytes = 0;
  std::int64_t huge_bytes = 0;
  std::int64_t without_huge = 0;
  std::int64_t most_without_huge = 0;
  std::int64_t shared = 0;
  std::int64_t less_ask = -static_cast<std::int64_t>(PageAsk::hugetlb) - 1;
  std::int64_t rank0_node = -1;
  double less_huge_share = -2;
  double less_home_share = -2;
};

RankTable measure(const ProcessPages& pages, std::span<const std::uint8_t> rows, bool rank0) {
  RankTable r;
  if (rows.empty()) return r;
  const PageUse use = pages.use_of(rows.data(), rows.size());
  if (!use.known) return r;  // the kernel said nothing of it (smaps unreadable): left out, not taken for none
  r.holds = 1;
  r.bytes = static_cast<std::int64_t>(use.bytes);
  r.huge_bytes = static_cast<std::int64_t>(use.huge_bytes);
  r.without_huge = use.huge_bytes == 0 ? 1 : 0;
  r.most_without_huge = use.huge_bytes == 0 ? r.bytes : 0;
  r.shared = use.shared ? 1 : 0;
  r.less_ask = -static_cast<std::int64_t>(use.ask);
  r.less_huge_share = -use.huge_share();
  const std::uint64_t resident = std::accumulate(use.node_bytes.begin(), use.node_bytes.end(), std::uint64_t{0});
  if (rank0 && resident > 0)
    r.rank0_node = std::max_element(use.node_bytes.begin(), use.node_bytes.end()) - use.node_bytes.begin();
  const auto home = static_cast<std::size_t>(numa_home());
  if (numa_home() >= 0 && resident > 0)
    r.less_home_share =
        -(home < use.node_bytes.size() ? static_cast<double>(use.node_bytes[home]) / static_cast<double>(resident) : 0);
  return r;
}

std::string gigabytes(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", static_cast<double>(bytes) * 1e-9);
  return text;
}

}  // namespace

std::vector<HostTablePages> measure_host_tables(MPI_Comm comm, const RowStore& store,
                                                std::span<const StorageTier> tiers) {
  int rank = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const ProcessPages pages;
  std::vector<int> layers;
  std::vector<RankTable> values;
  for (int d = 0; d < store.layers(); ++d) {
    if (!capabilities_of(tiers[static_cast<std::size_t>(d)]).in_host_memory) continue;
    layers.push_back(d);
    values.push_back(measure(pages, store.host_rows(d), rank == 0));
  }
  RankReduction reduction;
  for (RankTable& r : values) {
    reduction.sum(r.holds).sum(r.bytes).sum(r.huge_bytes).sum(r.without_huge);
    reduction.max(r.most_without_huge).max(r.shared).max(r.less_ask).max(r.rank0_node);
    reduction.max(r.less_huge_share).max(r.less_home_share);
  }
  reduction.run(comm);
  std::vector<HostTablePages> tables;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const RankTable& r = values[i];
    HostTablePages t;
    t.ple_index = layers[i];
    t.tier = tiers[static_cast<std::size_t>(layers[i])];
    t.shared = r.shared != 0;
    t.ask = to_string(static_cast<PageAsk>(std::clamp<std::int64_t>(-r.less_ask, 0, 3)));
    t.ranks = static_cast<int>(r.holds);
    t.bytes = static_cast<std::uint64_t>(r.bytes);
    t.huge_bytes = static_cast<std::uint64_t>(r.huge_bytes);
    t.huge_share_min = r.holds > 0 ? -r.less_huge_share : 0;
    t.ranks_without_huge = static_cast<int>(r.without_huge);
    t.most_without_huge = static_cast<std::uint64_t>(r.most_without_huge);
    t.numa_node = static_cast<int>(r.rank0_node);
    t.home_share_min = r.less_home_share > -2 ? -r.less_home_share : -1;
    tables.push_back(t);
  }
  return tables;
}

std::vector<std::string> huge_page_warnings(std::span<const HostTablePages> tables, std::uint64_t from_bytes) {
  std::vector<std::string> lines;
  for (const HostTablePages& t : tables) {
    if (t.ranks_without_huge == 0 || t.most_without_huge < from_bytes) continue;
    const std::string fix =
        t.shared ? "mount /dev/shm with huge=advise (mount -o remount,huge=advise /dev/shm), or reserve 2 MiB pages "
                   "(sysctl vm.nr_hugepages=N) on a hugetlbfs mount the job may write, or keep a copy per rank "
                   "(--no-shared-tables)"
                 : "turn transparent huge pages on (echo madvise > /sys/kernel/mm/transparent_hugepage/enabled), or "
                   "reserve 2 MiB pages before the job (sysctl vm.nr_hugepages=N)";
    lines.push_back(std::string(to_string(t.tier)) + " tier: table " + std::to_string(t.ple_index) +
                    ": no 2 MiB page backs it on " + std::to_string(t.ranks_without_huge) + " of " +
                    std::to_string(t.ranks) + (t.ranks == 1 ? " rank" : " ranks") + " (" +
                    gigabytes(t.most_without_huge) + " a rank), so random row reads wait on page translations; " + fix +
                    " (docs/running.md: Huge pages)");
  }
  return lines;
}

}  // namespace pleshard
