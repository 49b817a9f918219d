#include "store/placed_store.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace pleshard {

PlacedStore::PlacedStore(std::vector<std::unique_ptr<RowStore>> parts, std::vector<int> holder)
    : parts_(std::move(parts)), holder_(std::move(holder)) {
  for (const auto& part : parts_)
    if (part->layers() != static_cast<int>(holder_.size()))
      throw SystemError("PlacedStore: a part spans " + std::to_string(part->layers()) + " layers, not " +
                        std::to_string(holder_.size()));
  for (std::size_t d = 0; d < holder_.size(); ++d) {
    if (holder_[d] < 0 || holder_[d] >= static_cast<int>(parts_.size()))
      throw SystemError("PlacedStore: layer " + std::to_string(d) + " has no part");
    const RowStore& part = *parts_[static_cast<std::size_t>(holder_[d])];
    layouts_.push_back(part.layout(static_cast<int>(d)));
    ranges_.push_back(part.range(static_cast<int>(d)));
  }
  part_queries_.assign(parts_.size(), std::vector<RowQuery>(holder_.size()));
  tasks_.resize(holder_.size());
}

RowStore::HostReadCounts PlacedStore::host_reads() const {
  HostReadCounts counts;
  for (const auto& part : parts_) counts += part->host_reads();
  return counts;
}

bool PlacedStore::reads_in_place(std::int64_t count) const {
  return std::all_of(parts_.begin(), parts_.end(), [&](const auto& part) { return part->reads_in_place(count); });
}

void PlacedStore::reserve(std::int64_t max_ids) {
  for (const auto& part : parts_) part->reserve(max_ids);
}

std::uint64_t PlacedStore::step_buffer_bytes(std::int64_t max_ids) const {
  std::uint64_t bytes = 0;
  for (const auto& part : parts_) bytes += part->step_buffer_bytes(max_ids);
  return bytes;
}

void PlacedStore::submit(std::span<const RowQuery> queries) {
  for (int p = 0; p < parts(); ++p) submit_part(p, queries);  // each checks the queries
}

void PlacedStore::submit_part(int part, std::span<const RowQuery> queries) {
  check_queries(queries);
  const auto p = static_cast<std::size_t>(part);
  for (std::size_t d = 0; d < holder_.size(); ++d)
    part_queries_.at(p)[d] = holder_[d] == part ? queries[d] : RowQuery{queries[d].ids, 0};
  parts_[p]->submit(part_queries_[p]);
}

std::span<const kernels::DecodeTask> PlacedStore::wait_part(int part) {
  const std::span<const kernels::DecodeTask> fetched = parts_.at(static_cast<std::size_t>(part))->wait();
  for (std::size_t d = 0; d < holder_.size(); ++d) {
    tasks_[d] = fetched[d];
    if (holder_[d] != part) tasks_[d].count = 0;  // another part's layer: no rows this time
  }
  return tasks_;
}

std::span<const kernels::DecodeTask> PlacedStore::wait() {
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    const std::span<const kernels::DecodeTask> part = parts_[p]->wait();
    for (std::size_t d = 0; d < holder_.size(); ++d)
      if (holder_[d] == static_cast<int>(p)) tasks_[d] = part[d];
  }
  return tasks_;
}

}  // namespace pleshard
