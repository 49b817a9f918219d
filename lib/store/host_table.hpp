#pragma once
// The host storage tier: one table's row range held in host memory, looked up by the
// Kokkos kernel. Ids outside the range give zero rows.

#include <cstdint>
#include <span>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "store/table_tier.hpp"

namespace pleshard {

// Part `index` of `parts` contiguous, balanced ranges of [0, rows): sizes differ by at most
// one, earlier parts taking the extra rows.
[[nodiscard]] RowRange balanced_range(std::int64_t rows, int parts, int index);

class HostTable final : public TableTier {
 public:
  // Reads rows [range.begin, range.end) of table `ple_index` from the checkpoint.
  HostTable(const PleCheckpoint& checkpoint, int ple_index, RowRange range);
  // Takes rows [range.begin, range.end) of the table `source` produces.
  HostTable(const TableSource& source, RowRange range);

  [[nodiscard]] kernels::TableView view() const;
  [[nodiscard]] StorageTier tier() const override { return StorageTier::host; }
  [[nodiscard]] const TableLayout& layout() const override { return layout_; }
  [[nodiscard]] RowRange range() const override { return range_; }

  void lookup(const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out) override;
  // out: ids.size() * head_dim elements of `dtype`.
  void lookup(std::span<const std::int64_t> ids, OutDtype dtype, void* out) const;

 private:
  TableLayout layout_;
  RowRange range_;
  float global_scale_ = 1.0f;
  std::vector<std::uint8_t> rows_;
  std::vector<std::uint8_t> scales_;
};

}  // namespace pleshard
