#include "store/gpu_table.hpp"

#include <algorithm>
#include <cstring>
#include <string>
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

GpuTable::GpuTable(const TableSource& source, RowRange range, StorageTier tier, int uva_blocks_per_sm)
    : layout_(source.info.layout),
      range_(range),
      tier_(tier),
      uva_blocks_per_sm_(uva_blocks_per_sm),
      global_scale_(source.info.global_scale) {
  if (tier == StorageTier::host || tier == StorageTier::disk)
    throw SystemError(std::string("GpuTable: not a GPU tier: ") + to_string(tier));
  const std::size_t row_bytes = layout_.row_bytes();
  const std::size_t scale_bytes = layout_.scale_bytes();
  // NVFP4 block scales follow their row's codes, padded to 16 bytes: one memory access per
  // row instead of two, and rows that keep the kernel's 16-byte alignment.
  pitch_ = scale_bytes == 0 ? row_bytes : (row_bytes + scale_bytes + 15) / 16 * 16;
  const auto rows = static_cast<std::size_t>(range.size());
  rows_ = allocate(rows * pitch_, tier);
  try {
    // Bands of about 64 MiB, read, interleaved and copied in place.
    const std::size_t band = std::max<std::size_t>(1, (64u << 20) / pitch_);
    std::vector<std::uint8_t> staged_rows, staged_scales, packed;
    for (std::size_t first = 0; first < rows; first += band) {
      const std::size_t n = std::min(band, rows - first);
      staged_rows.resize(n * row_bytes);
      staged_scales.resize(n * scale_bytes);
      const auto begin = range.begin + static_cast<std::int64_t>(first);
      source.rows(begin, begin + static_cast<std::int64_t>(n), staged_rows, staged_scales);
      const std::uint8_t* band_bytes = staged_rows.data();
      if (scale_bytes != 0) {
        packed.assign(n * pitch_, 0);
        for (std::size_t r = 0; r < n; ++r) {
          std::memcpy(packed.data() + r * pitch_, staged_rows.data() + r * row_bytes, row_bytes);
          std::memcpy(packed.data() + r * pitch_ + row_bytes, staged_scales.data() + r * scale_bytes, scale_bytes);
        }
        band_bytes = packed.data();
      }
      PLESHARD_CUDA_CHECK(cudaMemcpy(rows_ + first * pitch_, band_bytes, n * pitch_, cudaMemcpyDefault));
    }
  } catch (...) {
    release(rows_, tier_);
    throw;
  }
}

GpuTable::~GpuTable() { release(rows_, tier_); }

kernels::TableView GpuTable::view() const {
  const bool nvfp4 = layout_.scale_bytes() != 0;
  return {layout_.format,
          layout_.head_dim,
          range_.begin,
          range_.end,
          rows_,
          nvfp4 ? rows_ + layout_.row_bytes() : nullptr,
          global_scale_,
          pitch_,
          nvfp4 ? pitch_ : 0};
}

kernels::DistinctRows& GpuTable::distinct() const {
  if (!distinct_) distinct_ = std::make_unique<kernels::DistinctRows>(uva_blocks_per_sm_);
  return *distinct_;
}

bool GpuTable::gathers_distinct(std::int64_t num_ids) const {
  return tier_ == StorageTier::pinned && num_ids >= k_pinned_group_min_ids;
}

void GpuTable::reserve(std::int64_t max_ids) const {
  if (gathers_distinct(max_ids)) distinct().reserve(view(), max_ids);
}

kernels::DecodeTask GpuTable::rows_for(const std::int64_t* ids, std::int64_t num_ids, cudaStream_t stream) const {
  if (gathers_distinct(num_ids)) return distinct().gather(view(), ids, num_ids, stream);
  return {view(), ids, num_ids, nullptr};
}

void GpuTable::lookup(const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out,
                      cudaStream_t stream) const {
  kernels::DecodeTask task = rows_for(ids, num_ids, stream);
  task.out = out;
  kernels::decode_step_cuda({&task, 1}, dtype, stream);
}

}  // namespace pleshard
