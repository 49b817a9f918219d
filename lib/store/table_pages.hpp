#pragma once
// The pages behind each table a store keeps in host memory (the host and pinned tiers),
// measured on every rank (core/page_use.hpp) and agreed over the ranks: the report's
// `host_pages`, `pleshard bench load`'s shares, and the warning for a large table that no
// huge page backs (random row reads of it are then bound by page translations).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "store/row_store.hpp"
#include "store/storage_tier.hpp"

namespace pleshard {

// One table's pages over the ranks that hold rows of it in host memory.
struct HostTablePages {
  int ple_index = 0;
  StorageTier tier = StorageTier::host;
  bool shared = false;                  // in a node's shared segment (on some rank)
  std::string ask = "system";           // how the weakest rank's mapping asks for pages (PageAsk)
  int ranks = 0;                        // ranks holding rows of it, whose kernel says how they are mapped
  std::uint64_t bytes = 0;              // their bytes of it, summed (a shared copy once per rank mapping it)
  std::uint64_t huge_bytes = 0;         // of them on 2 MiB pages
  double huge_share_min = 0;            // the lowest share of a rank's bytes on 2 MiB pages
  int ranks_without_huge = 0;           // ranks none of whose bytes of it are on 2 MiB pages
  std::uint64_t most_without_huge = 0;  // the most bytes of it such a rank holds
  int numa_node = -1;                   // where most of rank 0's pages of it lie; -1: unknown, or none there
  double home_share_min = -1;  // the lowest share of a rank's pages of it on its NUMA home; -1: no rank has one
  [[nodiscard]] double huge_share() const {
    return bytes > 0 ? static_cast<double>(huge_bytes) / static_cast<double>(bytes) : 0;
  }
};

// Collective over `comm`: the tables of `store` whose tier (`tiers[d]`, the same on every
// rank) keeps them in host memory, each measured where it lies on every rank.
[[nodiscard]] std::vector<HostTablePages> measure_host_tables(MPI_Comm comm, const RowStore& store,
                                                              std::span<const StorageTier> tiers);

// Tables of a rank's at least this many bytes with none on huge pages are warned about.
inline constexpr std::uint64_t k_huge_page_warning_bytes = 1'000'000'000;

// One line for each table that some rank holds `from_bytes` or more of with no huge page
// under it, saying how to give it some.
[[nodiscard]] std::vector<std::string> huge_page_warnings(std::span<const HostTablePages> tables,
                                                          std::uint64_t from_bytes = k_huge_page_warning_bytes);

}  // namespace pleshard
