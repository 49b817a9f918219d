#include "store/host_table.hpp"

#include "core/error.hpp"
#include "kernels/host/lookup_host.hpp"

namespace pleshard {

HostTable::HostTable(const PleCheckpoint& checkpoint, int ple_index, RowRange range)
    : HostTable(checkpoint.table_source(ple_index), range) {}

HostTable::HostTable(const TableSource& source, RowRange range)
    : layout_(source.info.layout), range_(range), global_scale_(source.info.global_scale) {
  if (range.begin < 0 || range.end > layout_.rows || range.begin > range.end)
    throw InputError("row range [" + std::to_string(range.begin) + ", " + std::to_string(range.end) +
                     ") outside the table's " + std::to_string(layout_.rows) + " rows");
  rows_.resize(static_cast<std::size_t>(range.size()) * layout_.row_bytes());
  scales_.resize(static_cast<std::size_t>(range.size()) * layout_.scale_bytes());
  source.rows(range.begin, range.end, rows_, scales_);
}

kernels::TableView HostTable::view() const {
  return {layout_.format, layout_.head_dim, range_.begin,
          range_.end,     rows_.data(),     scales_.empty() ? nullptr : scales_.data(),
          global_scale_};
}

void HostTable::lookup(std::span<const std::int64_t> ids, OutDtype dtype, void* out) const {
  kernels::lookup_rows_host(view(), ids.data(), static_cast<std::int64_t>(ids.size()), dtype, out);
}

}  // namespace pleshard
