#include "store/host_store.hpp"

#include "core/collective.hpp"
#include "core/fault_plan.hpp"
#include "core/mpi_check.hpp"

namespace pleshard {

HostStore::HostStore(const PleCheckpoint& checkpoint, std::span<const RowRange> ranges, MPI_Comm share) {
  int sharers = 1;
  if (share != MPI_COMM_NULL) PLESHARD_MPI_CHECK(MPI_Comm_size(share, &sharers));
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
      // A maker that cannot read its rows fails the group, not only itself.
      collective_try(share, [&] { tables_.emplace_back(checkpoint.table_source(table), ranges[d], segment); });
    } else {
      tables_.emplace_back(checkpoint, table, ranges[d]);
    }
    layouts_.push_back(tables_.back().layout());
    ranges_.push_back(ranges[d]);
  }
  // The makers have read every table before any rank looks one up.
  if (sharers > 1) PLESHARD_MPI_CHECK(MPI_Barrier(share));
  tasks_.resize(tables_.size());
}

void HostStore::submit(std::span<const RowQuery> queries) {
  check_queries(queries);
  for (std::size_t d = 0; d < tables_.size(); ++d) tasks_[d] = {tables_[d].view(), queries[d].ids, queries[d].count};
}

}  // namespace pleshard
