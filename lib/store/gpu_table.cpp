#include "store/gpu_table.hpp"

#include <algorithm>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/lookup_cuda.hpp"

namespace pleshard {

namespace {

std::uint8_t* allocate(std::size_t bytes, StorageTier tier) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  if (tier == StorageTier::device) {
    PLESHARD_CUDA_CHECK(cudaMalloc(&p, bytes));
  } else {
    PLESHARD_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  }
  return static_cast<std::uint8_t*>(p);
}

void release(std::uint8_t* p, StorageTier tier) {
  if (p == nullptr) return;
  if (tier == StorageTier::device) {
    cudaFree(p);
  } else {
    cudaFreeHost(p);
  }
}

}  // namespace

GpuTable::GpuTable(const TableSource& source, RowRange range, StorageTier tier)
    : layout_(source.info.layout), range_(range), tier_(tier), global_scale_(source.info.global_scale) {
  if (tier == StorageTier::host) throw SystemError("GpuTable: the host tier is HostTable");
  const std::size_t row_bytes = layout_.row_bytes();
  const std::size_t scale_bytes = layout_.scale_bytes();
  const auto rows = static_cast<std::size_t>(range.size());
  rows_ = allocate(rows * row_bytes, tier);
  try {
    scales_ = allocate(rows * scale_bytes, tier);
    if (tier == StorageTier::pinned) {
      source.rows(range.begin, range.end, {rows_, rows * row_bytes}, {scales_, rows * scale_bytes});
      return;
    }
    // Device: stage bands of about 64 MiB through host memory.
    const std::size_t band = std::max<std::size_t>(1, (64u << 20) / layout_.bytes_per_row());
    std::vector<std::uint8_t> staged_rows, staged_scales;
    for (std::size_t first = 0; first < rows; first += band) {
      const std::size_t n = std::min(band, rows - first);
      staged_rows.resize(n * row_bytes);
      staged_scales.resize(n * scale_bytes);
      const auto begin = range.begin + static_cast<std::int64_t>(first);
      source.rows(begin, begin + static_cast<std::int64_t>(n), staged_rows, staged_scales);
      PLESHARD_CUDA_CHECK(cudaMemcpy(rows_ + first * row_bytes, staged_rows.data(), staged_rows.size(),
                                     cudaMemcpyHostToDevice));
      if (scale_bytes != 0)
        PLESHARD_CUDA_CHECK(cudaMemcpy(scales_ + first * scale_bytes, staged_scales.data(), staged_scales.size(),
                                       cudaMemcpyHostToDevice));
    }
  } catch (...) {
    release(rows_, tier_);
    release(scales_, tier_);
    throw;
  }
}

GpuTable::~GpuTable() {
  release(rows_, tier_);
  release(scales_, tier_);
}

kernels::TableView GpuTable::view() const {
  return {layout_.format, layout_.head_dim, range_.begin, range_.end, rows_, scales_, global_scale_};
}

void GpuTable::reserve(std::int64_t max_ids) const {
  if (tier_ != StorageTier::pinned || max_ids < k_pinned_group_min_ids) return;
  if (!grouped_) grouped_ = std::make_unique<kernels::GroupedLookup>();
  grouped_->reserve(view(), max_ids);
}

void GpuTable::lookup(const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out,
                      cudaStream_t stream) const {
  if (tier_ == StorageTier::pinned && num_ids >= k_pinned_group_min_ids) {
    if (!grouped_) grouped_ = std::make_unique<kernels::GroupedLookup>();
    grouped_->run(view(), ids, num_ids, dtype, out, stream);
    return;
  }
  kernels::lookup_rows_cuda(view(), ids, num_ids, dtype, out, stream);
}

}  // namespace pleshard
