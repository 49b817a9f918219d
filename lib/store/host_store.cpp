#include "store/host_store.hpp"

#include "core/collective.hpp"
#include "core/fault_plan.hpp"
#include "core/mpi_check.hpp"

namespace pleshard {

HostStore::HostStore(const PleCheckpoint& checkpoint, std::span<const RowRange> ranges, MPI_Comm share) {
  int sharers = 1;
  int sharer = 0;
  if (share != MPI_COMM_NULL) {
    PLESHARD_MPI_CHECK(MPI_Comm_size(share, &sharers));
    PLESHARD_MPI_CHECK(MPI_Comm_rank(share, &sharer));
  }
  for (std::size_t d = 0; d < ranges.size(); ++d) {
    const int table = static_cast<int>(d);
    const bool shared = sharers > 1 && ranges[d].size() > 0;
    std::shared_ptr<const NodeSegment> segment;
    if (shared)
      segment =
          std::make_shared<const NodeSegment>(share, HostTable::bytes_for(checkpoint.table(table).layout, ranges[d]),
                                              "host tier: table " + std::to_string(d));
    reach_fault_point(FaultPoint::load);  // a test's stop: no row of the table read yet
    if (shared) {
      // Every rank of the group reads its part, side by side, so that none waits for one
      // rank's read of the whole table: the wait for the group's agreement after it, watched
      // by the stall limit, lasts only as long as the parts' reads differ.
      const TableSource source = checkpoint.table_source(table);
      const RowRange fill = balanced_cuts(ranges[d], source.chunk_rows, sharers, sharer);
      // A rank that cannot read its part fails the group, not only itself; once the group has
      // agreed, every part is read.
      collective_try(share, [&] { tables_.emplace_back(source, ranges[d], segment, fill); });
    } else {
      tables_.emplace_back(checkpoint, table, ranges[d]);
    }
    layouts_.push_back(tables_.back().layout());
    ranges_.push_back(ranges[d]);
  }
  tasks_.resize(tables_.size());
}

void HostStore::submit(std::span<const RowQuery> queries) {
  check_queries(queries);
  for (std::size_t d = 0; d < tables_.size(); ++d) tasks_[d] = {tables_[d].view(), queries[d].ids, queries[d].count};
}

}  // namespace pleshard
