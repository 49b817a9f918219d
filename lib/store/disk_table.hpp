#pragma once
// The disk tier: no table in memory. Each lookup copies the ids to the host, reads only
// the distinct rows from the checkpoint's files, stages them into the step space and
// decodes them there. A disk table holds every row of its table, so lookups in it need no
// reduction across ranks.

#include <cstdint>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "exec/step_space.hpp"
#include "store/table_tier.hpp"

namespace pleshard {

class DiskTable final : public TableTier {
 public:
  // `checkpoint` must outlive the table and must not read collectively.
  DiskTable(const PleCheckpoint& checkpoint, int ple_index, StepSpace& space);

  [[nodiscard]] StorageTier tier() const override { return StorageTier::disk; }
  [[nodiscard]] const TableLayout& layout() const override { return info_.layout; }
  [[nodiscard]] RowRange range() const override { return {0, info_.layout.rows}; }

  void lookup(const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out) override;

  // Rows read by the last lookup (its distinct ids inside the table).
  [[nodiscard]] std::int64_t rows_read() const { return static_cast<std::int64_t>(distinct_.size()); }

 private:
  const PleCheckpoint& checkpoint_;
  PleTableInfo info_;
  StepSpace& space_;
  std::vector<std::int64_t> host_ids_;
  std::vector<std::int64_t> distinct_;
  std::vector<std::uint8_t> host_rows_;
  std::vector<std::uint8_t> host_scales_;
  SpaceBuffer ids_;     // each id's position among the distinct rows, -1 outside the table
  SpaceBuffer rows_;    // the distinct rows
  SpaceBuffer scales_;  // and their block scales (nvfp4)
};

}  // namespace pleshard
