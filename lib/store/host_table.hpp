#pragma once
// One table's row range held in host memory, looked up by the Kokkos kernel. Ids outside
// the range give zero rows.

#include <cstdint>
#include <memory>
#include <span>

#include "ckpt/ple_checkpoint.hpp"
#include "core/host_memory.hpp"
#include "core/node_segment.hpp"
#include "store/row_range.hpp"

namespace pleshard {

class HostTable {
 public:
  // Reads rows [range.begin, range.end) of table `ple_index` from the checkpoint.
  HostTable(const PleCheckpoint& checkpoint, int ple_index, RowRange range);
  // Takes rows [range.begin, range.end) of the table `source` produces.
  HostTable(const TableSource& source, RowRange range);
  // The same rows in memory the ranks of a node share (store/host_store.hpp): each rank of
  // the group reads its part `fill` of `range` into place (a collective read needs every
  // rank; a part may be empty), and uses the others' once the group has agreed that all are
  // read. `shared` holds bytes_for(layout, range).
  HostTable(const TableSource& source, RowRange range, std::shared_ptr<const NodeSegment> shared, RowRange fill);
  [[nodiscard]] static std::size_t bytes_for(const TableLayout& layout, RowRange range);

  [[nodiscard]] kernels::TableView view() const;
  [[nodiscard]] const TableLayout& layout() const { return layout_; }
  [[nodiscard]] RowRange range() const { return range_; }
  // The rows, then their block scales: the memory the table keeps.
  [[nodiscard]] std::span<const std::uint8_t> bytes() const { return {rows_.data(), rows_.size() + scales_.size()}; }

  // out: ids.size() * head_dim elements of `dtype`.
  void lookup(std::span<const std::int64_t> ids, OutDtype dtype, void* out) const;

 private:
  TableLayout layout_;
  RowRange range_;
  float global_scale_ = 1.0f;
  HostBytes own_;                              // rows, then block scales; or
  std::shared_ptr<const NodeSegment> shared_;  // the node's copy of them
  std::span<std::uint8_t> rows_;
  std::span<std::uint8_t> scales_;
};

}  // namespace pleshard
