#pragma once
// Tables on several tiers as one store (store/placement.hpp): each layer's lookups go to the
// store of its table's tier, which holds none of the other tables' rows; every tier's fetch
// is in flight together between submit() and wait(), and the step decodes every layer's rows
// in one launch from wherever each tier leaves them, as from one store — or part by part
// (submit_part, wait_part), each part's layers decoded while the next part fetches. It
// fetches ahead where a part does (a pinned or disk table beside a device one): the parts
// that read their tables in place then get copies of the step's ids, two sets in turn, so
// that the next step's hash leaves this step's keys as they were.

#include <memory>
#include <vector>

#include "exec/step_space.hpp"
#include "store/row_store.hpp"

namespace pleshard {

class PlacedStore final : public RowStore {
 public:
  // `parts[p]` spans every layer; layer d is held by parts[holder[d]], whose range for it is
  // the layer's rows (the other parts' ranges for it are empty); `space` is theirs.
  PlacedStore(std::vector<std::unique_ptr<RowStore>> parts, std::vector<int> holder, StepSpace& space);

  [[nodiscard]] HostReadCounts host_reads() const override;
  [[nodiscard]] bool reads_in_place(std::int64_t count) const override;
  [[nodiscard]] bool fetches_ahead() const override;
  // Where some part fetches ahead at `count` and every other part does, or reads in place
  // at it (from copied ids).
  [[nodiscard]] bool fetches_ahead_at(std::int64_t count) const override;
  void set_fetching_ahead(bool on) override;
  void reserve(std::int64_t max_ids) override;
  [[nodiscard]] std::uint64_t step_buffer_bytes(std::int64_t max_ids) const override;
  [[nodiscard]] std::uint64_t step_host_bytes(std::int64_t max_ids) const override;
  void submit(std::span<const RowQuery> queries) override;
  [[nodiscard]] std::span<const kernels::DecodeTask> wait() override;
  void abandon() override {
    for (const auto& part : parts_) part->abandon();
  }
  [[nodiscard]] int parts() const override { return static_cast<int>(parts_.size()); }
  [[nodiscard]] bool part_holds(int part, int layer) const override {
    return holder_.at(static_cast<std::size_t>(layer)) == part;
  }
  void submit_part(int part, std::span<const RowQuery> queries) override;
  [[nodiscard]] std::span<const kernels::DecodeTask> wait_part(int part) override;
  [[nodiscard]] std::span<const std::uint8_t> host_rows(int layer) const override {
    return parts_[static_cast<std::size_t>(holder_.at(static_cast<std::size_t>(layer)))]->host_rows(layer);
  }

 private:
  // Whether part p's lookups of `count` ids a layer are read from copies of the ids.
  [[nodiscard]] bool copies_ids(std::size_t p, std::int64_t count) const;
  // Bytes of one set of copied ids.
  [[nodiscard]] std::size_t ids_bytes(std::int64_t max_ids) const;

  std::vector<std::unique_ptr<RowStore>> parts_;
  std::vector<int> holder_;
  StepSpace& space_;
  bool ahead_ = false;  // steps begin ahead: ids copied for the parts that read in place
  int turn_ = 0;
  std::int64_t max_ids_ = 0;
  SpaceBuffer ids_[2];                               // per turn: [layer][max_ids_] copied ids
  std::vector<std::vector<RowQuery>> part_queries_;  // per part: its layers' queries, none for the others
  std::vector<kernels::DecodeTask> tasks_;
};

}  // namespace pleshard
