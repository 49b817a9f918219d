#include "store/host_table.hpp"

#include "core/error.hpp"
#include "kernels/host/lookup_host.hpp"

namespace pleshard {

HostTable::HostTable(const PleCheckpoint& checkpoint, int ple_index, RowRange range)
    : HostTable(checkpoint.table_source(ple_index), range) {}

namespace {

void check_range(const TableLayout& layout, RowRange range) {
  if (range.begin < 0 || range.end > layout.rows || range.begin > range.end)
    throw InputError("row range [" + std::to_string(range.begin) + ", " + std::to_string(range.end) +
                     ") outside the table's " + std::to_string(layout.rows) + " rows");
}

}  // namespace

std::size_t HostTable::bytes_for(const TableLayout& layout, RowRange range) {
  return static_cast<std::size_t>(range.size()) * (layout.row_bytes() + layout.scale_bytes());
}

HostTable::HostTable(const TableSource& source, RowRange range)
    : layout_(source.info.layout), range_(range), global_scale_(source.info.global_scale) {
  check_range(layout_, range);
  own_ = HostBytes(bytes_for(layout_, range), "host tier: table " + std::to_string(source.info.ple_index));
  const std::size_t row_bytes = static_cast<std::size_t>(range.size()) * layout_.row_bytes();
  rows_ = own_.span().first(row_bytes);
  scales_ = own_.span().subspan(row_bytes);
  source.rows(range.begin, range.end, rows_, scales_);
}

HostTable::HostTable(const TableSource& source, RowRange range, std::shared_ptr<const NodeSegment> shared,
                     RowRange fill)
    : layout_(source.info.layout), range_(range), global_scale_(source.info.global_scale), shared_(std::move(shared)) {
  check_range(layout_, range);
  if (fill.begin < range.begin || fill.end > range.end || fill.begin > fill.end)
    throw SystemError("HostTable: rows [" + std::to_string(fill.begin) + ", " + std::to_string(fill.end) +
                      ") to read outside the shared range");
  if (shared_->size() != bytes_for(layout_, range))
    throw SystemError("HostTable: a shared segment of " + std::to_string(shared_->size()) + " bytes for " +
                      std::to_string(bytes_for(layout_, range)));
  const std::size_t row_bytes = static_cast<std::size_t>(range.size()) * layout_.row_bytes();
  const std::span<std::uint8_t> all(shared_->data(), shared_->size());
  rows_ = all.first(row_bytes);
  scales_ = all.subspan(row_bytes);
  const auto at = static_cast<std::size_t>(fill.begin - range.begin);
  const auto n = static_cast<std::size_t>(fill.size());
  source.rows(fill.begin, fill.end, rows_.subspan(at * layout_.row_bytes(), n * layout_.row_bytes()),
              scales_.subspan(at * layout_.scale_bytes(), n * layout_.scale_bytes()));
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
