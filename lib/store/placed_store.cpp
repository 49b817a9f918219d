#include "store/placed_store.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace pleshard {

PlacedStore::PlacedStore(std::vector<std::unique_ptr<RowStore>> parts, std::vector<int> holder, StepSpace& space)
    : parts_(std::move(parts)),
      holder_(std::move(holder)),
      space_(space),
      ids_{SpaceBuffer(space), SpaceBuffer(space)} {
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

bool PlacedStore::fetches_ahead() const {
  return std::any_of(parts_.begin(), parts_.end(), [](const auto& part) { return part->fetches_ahead(); });
}

bool PlacedStore::copies_ids(std::size_t p, std::int64_t count) const {
  // Only where the step may begin ahead: not in a CUDA graph, and some other part fetches
  // ahead at its size. (Where every part reads in place the decode may hash its own keys
  // from the plan, whose ids are then never written, and must be handed the plan's.)
  if (!ahead_ || space_.capturing() || parts_[p]->fetches_ahead_at(count) || !parts_[p]->reads_in_place(count))
    return false;
  return std::any_of(parts_.begin(), parts_.end(), [&](const auto& part) { return part->fetches_ahead_at(count); });
}

bool PlacedStore::fetches_ahead_at(std::int64_t count) const {
  bool fetching = false;
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    const bool ahead = parts_[p]->fetches_ahead_at(count);
    if (!ahead && !copies_ids(p, count)) return false;
    fetching = fetching || ahead;
  }
  return fetching;
}

void PlacedStore::set_fetching_ahead(bool on) {
  for (const auto& part : parts_) part->set_fetching_ahead(on);
  ahead_ = on && fetches_ahead();
}

std::size_t PlacedStore::ids_bytes(std::int64_t max_ids) const {
  return ahead_ ? holder_.size() * static_cast<std::size_t>(max_ids) * sizeof(std::int64_t) : 0;
}

std::uint64_t PlacedStore::step_host_bytes(std::int64_t max_ids) const {
  std::uint64_t bytes = 0;
  for (const auto& part : parts_) bytes += part->step_host_bytes(max_ids);
  return bytes;
}

void PlacedStore::reserve(std::int64_t max_ids) {
  for (const auto& part : parts_) part->reserve(max_ids);
  if (max_ids <= max_ids_) return;
  max_ids_ = max_ids;
  for (SpaceBuffer& ids : ids_) ids.reserve(ids_bytes(max_ids));
}

std::uint64_t PlacedStore::step_buffer_bytes(std::int64_t max_ids) const {
  std::uint64_t bytes = 2 * ids_bytes(max_ids);
  for (const auto& part : parts_) bytes += part->step_buffer_bytes(max_ids);
  return bytes;
}

void PlacedStore::submit(std::span<const RowQuery> queries) {
  for (int p = 0; p < parts(); ++p) submit_part(p, queries);  // each checks the queries
}

void PlacedStore::submit_part(int part, std::span<const RowQuery> queries) {
  check_queries(queries);
  const auto p = static_cast<std::size_t>(part);
  if (ahead_ && part == 0) turn_ ^= 1;  // a step's first part: the step before's copies kept
  for (std::size_t d = 0; d < holder_.size(); ++d) {
    RowQuery& q = part_queries_.at(p)[d];
    q = holder_[d] == part ? queries[d] : RowQuery{queries[d].ids, 0};
    if (q.count == 0 || !copies_ids(p, q.count)) continue;
    if (q.count > max_ids_)
      throw SystemError("PlacedStore: " + std::to_string(q.count) + " ids; reserved for " + std::to_string(max_ids_));
    auto* copy = ids_[turn_].as<std::int64_t>() + d * static_cast<std::size_t>(max_ids_);
    space_.copy(copy, q.ids, static_cast<std::size_t>(q.count) * sizeof(std::int64_t));
    q.ids = copy;
  }
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
