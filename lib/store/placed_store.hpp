#pragma once
// Tables on several tiers as one store (store/placement.hpp): each layer's lookups go to the
// store of its table's tier, which holds none of the other tables' rows; every tier's fetch
// is in flight together between submit() and wait(), and the step decodes every layer's rows
// in one launch from wherever each tier leaves them, as from one store — or part by part
// (submit_part, wait_part), each part's layers decoded while the next part fetches.

#include <memory>
#include <vector>

#include "store/row_store.hpp"

namespace pleshard {

class PlacedStore final : public RowStore {
 public:
  // `parts[p]` spans every layer; layer d is held by parts[holder[d]], whose range for it is
  // the layer's rows (the other parts' ranges for it are empty).
  PlacedStore(std::vector<std::unique_ptr<RowStore>> parts, std::vector<int> holder);

  [[nodiscard]] HostReadCounts host_reads() const override;
  [[nodiscard]] bool reads_in_place(std::int64_t count) const override;
  void reserve(std::int64_t max_ids) override;
  [[nodiscard]] std::uint64_t step_buffer_bytes(std::int64_t max_ids) const override;
  void submit(std::span<const RowQuery> queries) override;
  [[nodiscard]] std::span<const kernels::DecodeTask> wait() override;
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
  std::vector<std::unique_ptr<RowStore>> parts_;
  std::vector<int> holder_;
  std::vector<std::vector<RowQuery>> part_queries_;  // per part: its layers' queries, none for the others
  std::vector<kernels::DecodeTask> tasks_;
};

}  // namespace pleshard
