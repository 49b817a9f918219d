#include "store/disk_table.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace pleshard {

DiskTable::DiskTable(const PleCheckpoint& checkpoint, int ple_index, StepSpace& space)
    : checkpoint_(checkpoint), info_(checkpoint.table(ple_index)), space_(space), ids_(space), rows_(space), scales_(space) {
  if (checkpoint.reads_collectively())
    throw SystemError(checkpoint.path() + ": the disk tier needs a checkpoint opened for independent reads");
}

void DiskTable::lookup(const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out) {
  const auto n = static_cast<std::size_t>(num_ids);
  host_ids_.resize(n);
  space_.copy_to_host(host_ids_.data(), ids, n * sizeof(std::int64_t));

  const std::int64_t rows = info_.layout.rows;
  distinct_.clear();
  for (const std::int64_t id : host_ids_)
    if (id >= 0 && id < rows) distinct_.push_back(id);
  std::sort(distinct_.begin(), distinct_.end());
  distinct_.erase(std::unique(distinct_.begin(), distinct_.end()), distinct_.end());

  const std::size_t row_bytes = info_.layout.row_bytes();
  const std::size_t scale_bytes = info_.layout.scale_bytes();
  host_rows_.resize(distinct_.size() * row_bytes);
  host_scales_.resize(distinct_.size() * scale_bytes);
  checkpoint_.read_row_set(info_.ple_index, distinct_, host_rows_, host_scales_);

  // Ids become positions in the packed rows; ids outside the table stay outside.
  for (std::int64_t& id : host_ids_) {
    const auto at = std::lower_bound(distinct_.begin(), distinct_.end(), id);
    id = (at != distinct_.end() && *at == id) ? at - distinct_.begin() : -1;
  }

  ids_.reserve(std::max<std::size_t>(1, n) * sizeof(std::int64_t));
  rows_.reserve(std::max<std::size_t>(1, host_rows_.size()));
  scales_.reserve(std::max<std::size_t>(1, host_scales_.size()));
  space_.copy_from_host(ids_.data(), host_ids_.data(), n * sizeof(std::int64_t));
  space_.copy_from_host(rows_.data(), host_rows_.data(), host_rows_.size());
  space_.copy_from_host(scales_.data(), host_scales_.data(), host_scales_.size());
  const kernels::TableView packed{info_.layout.format,
                                  info_.layout.head_dim,
                                  0,
                                  static_cast<std::int64_t>(distinct_.size()),
                                  rows_.data(),
                                  scale_bytes == 0 ? nullptr : scales_.data(),
                                  info_.global_scale};
  space_.decode_rows(packed, ids_.as<std::int64_t>(), num_ids, dtype, out);
  // The host staging vectors are refilled by the next lookup; the copies above are from
  // pageable memory, which CUDA stages before returning, so no wait is needed here.
}

}  // namespace pleshard
