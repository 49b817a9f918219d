#include "store/host_store.hpp"

namespace pleshard {

HostStore::HostStore(const PleCheckpoint& checkpoint, std::span<const RowRange> ranges) {
  for (std::size_t d = 0; d < ranges.size(); ++d) {
    tables_.emplace_back(checkpoint, static_cast<int>(d), ranges[d]);
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
