#include "store/gpu_table.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "core/band_pipeline.hpp"
#include "core/host_memory.hpp"
#include "core/mpi_check.hpp"
#include "core/parallel.hpp"
#include "io/file_reads.hpp"
#include "io/pread_file.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/lookup_cuda.hpp"
#include "kernels/cuda/synthetic_cuda.hpp"
#include "kernels/gpu_device.hpp"
#include "store/device_rows.hpp"
#include "store/tier_memory.hpp"

namespace pleshard {

namespace {

// Two bands of rows as read, in page-locked memory used in turn: codes and (block-scaled
// formats) block scales of up to `rows` rows each.
struct StagedBand {
  kernels::PinnedBuffer rows;
  kernels::PinnedBuffer scales;
};
std::array<StagedBand, 2> staged_bands(std::size_t rows, const TableLayout& layout) {
  std::array<StagedBand, 2> bands;
  for (auto& b : bands)
    b = {kernels::PinnedBuffer(rows * layout.row_bytes()), kernels::PinnedBuffer(rows * layout.scale_bytes())};
  return bands;
}

// Band `b` of `source` into `into`.
void read_band(const TableSource& source, const TableLayout& layout, RowRange b, StagedBand& into) {
  const auto n = static_cast<std::size_t>(b.size());
  source.rows(b.begin, b.end, {into.rows.data(), n * layout.row_bytes()},
              {into.scales.data(), n * layout.scale_bytes()});
}

}  // namespace

GpuTable::GpuTable(const TableSource& source, RowRange range, StorageTier tier, const PinnedReads& reads,
                   MPI_Comm share)
    : layout_(source.info.layout),
      range_(range),
      tier_(tier),
      reads_(reads),
      share_(reads.host == HostReads::gather ? 1.0 : reads.host_share),
      global_scale_(source.info.global_scale),
      pitch_(gpu_row_pitch(layout_)) {
  if (tier == StorageTier::host || tier == StorageTier::disk)
    throw SystemError(std::string("GpuTable: not a GPU tier: ") + to_string(tier));
  if (range.begin < 0 || range.end > layout_.rows || range.begin > range.end)
    throw SystemError("GpuTable: row range [" + std::to_string(range.begin) + ", " + std::to_string(range.end) +
                      ") outside the table's " + std::to_string(layout_.rows) + " rows");
  // Distinct-row gathers key rows by 32-bit offsets within the range (one key kept for
  // "not here"): a larger pinned range is refused now, not at its first large lookup.
  if (tier == StorageTier::pinned && range.size() >= kernels::k_max_distinct_rows)
    throw InputError("pinned tier: table " + std::to_string(source.info.ple_index) + ": a rank's range of " +
                     std::to_string(range.size()) + " rows; at most " +
                     std::to_string(kernels::k_max_distinct_rows - 1) + " (use more ranks)");
  const std::size_t bytes = static_cast<std::size_t>(range.size()) * pitch_;
  if (tier == StorageTier::device) {
    const std::string what = "device tier: table " + std::to_string(source.info.ple_index);
    if (share != MPI_COMM_NULL) {
      shared_device_ = std::make_unique<SharedDeviceRows>(share, bytes, what);
      rows_ = shared_device_->data();
    } else {
      rows_ = allocate_device_rows(bytes, what);
    }
  } else {
    // At the file's alignment where the rows are read in place past the page cache, if that
    // keeps the 16-byte alignment the kernels' vector loads need (else through the cache).
    const bool in_place = source.past_cache && pitch_ == layout_.row_bytes() && !source.synthetic;
    std::size_t skew = in_place ? source.past_cache->file_offset(range.begin) % k_direct_block_bytes : 0;
    if (skew % 16 != 0) skew = 0;
    std::string what = "pinned tier: table " + std::to_string(source.info.ple_index);
    if (share != MPI_COMM_NULL) {
      auto segment = std::make_shared<const NodeSegment>(share, PinnedRows::mapping_bytes(bytes, skew), what);
      pinned_ = std::make_unique<PinnedRows>(std::move(segment), bytes, skew, std::move(what));
    } else {
      pinned_ = std::make_unique<PinnedRows>(bytes, skew, std::move(what));
    }
    rows_ = pinned_->data();
  }
  // The rows this rank makes or reads: all of them, or of rows a group shares its balanced
  // part, so that none of the group waits for one rank's whole load.
  RowRange fill = range;
  if (share != MPI_COMM_NULL) {
    int sharers = 1;
    int sharer = 0;
    PLESHARD_MPI_CHECK(MPI_Comm_size(share, &sharers));
    PLESHARD_MPI_CHECK(MPI_Comm_rank(share, &sharer));
    fill = balanced_cuts(range, source.chunk_rows, sharers, sharer);
  }
  try {
    if (source.synthetic) {
      make_synthetic(source.info.ple_index, source.synthetic->seed, fill);
    } else {
      load(source, fill);
    }
    if (pinned_) pinned_->lock_through(bytes);  // the others' parts too, for this rank's GPU
  } catch (...) {
    if (tier_ == StorageTier::device && !shared_device_) cudaFree(rows_);
    throw;
  }
}

void GpuTable::make_synthetic(int ple_index, std::uint64_t seed, RowRange fill) {
  const auto rows = static_cast<std::size_t>(fill.size());
  std::uint8_t* const at = rows_ + static_cast<std::size_t>(fill.begin - range_.begin) * pitch_;
  const kernels::OwnedStream stream;
  kernels::SyntheticTarget target{layout_.format, layout_.head_dim, seed, ple_index,
                                  fill.begin,     fill.size(),      at,   pitch_};
  target.scales = at + layout_.row_bytes();  // block scales after each row's codes
  target.scale_pitch = pitch_;
  if (tier_ == StorageTier::device) {
    // Pitch padding reads as zeros, as in a table loaded from a file.
    if (pitch_ != layout_.bytes_per_row()) PLESHARD_CUDA_CHECK(cudaMemsetAsync(at, 0, rows * pitch_, stream.get()));
    kernels::make_synthetic_rows_cuda(target, stream.get());
    stream.synchronize();
    return;
  }
  // Pinned: made in GPU memory band by band and copied down whole (rows the device wrote
  // one by one through the bus would be slow), two bands on two streams in turn. A copy
  // lands only in page-locked memory: every page the fill touches is locked first, the one
  // that holds its last row too, where the fill is a part of a shared copy whose next part
  // another rank makes (lock_through locks whole pages only up to a part's end).
  pinned_->lock_through(static_cast<std::size_t>(range_.size()) * pitch_);
  const std::size_t band = items_per_band(pitch_);
  const kernels::OwnedStream other;
  const cudaStream_t streams[2] = {stream.get(), other.get()};
  kernels::DeviceBuffer<std::uint8_t> staging[2] = {kernels::DeviceBuffer<std::uint8_t>(std::min(band, rows) * pitch_),
                                                    kernels::DeviceBuffer<std::uint8_t>(std::min(band, rows) * pitch_)};
  for (std::size_t first = 0, k = 0; first < rows; first += band, ++k) {
    const std::size_t n = std::min(band, rows - first);
    const cudaStream_t s = streams[k % 2];
    std::uint8_t* scratch = staging[k % 2].data();
    if (pitch_ != layout_.bytes_per_row()) PLESHARD_CUDA_CHECK(cudaMemsetAsync(scratch, 0, n * pitch_, s));
    target.first_row = fill.begin + static_cast<std::int64_t>(first);
    target.count = static_cast<std::int64_t>(n);
    target.rows = scratch;
    target.scales = scratch + layout_.row_bytes();
    kernels::make_synthetic_rows_cuda(target, s);
    PLESHARD_CUDA_CHECK(cudaMemcpyAsync(at + first * pitch_, scratch, n * pitch_, cudaMemcpyDeviceToHost, s));
  }
  stream.synchronize();
  other.synchronize();
}

void GpuTable::load(const TableSource& source, RowRange fill) {
  // Bands of about 64 MiB of stored rows on the source's chunk boundaries (else on those of
  // 1 MiB of codes), so that no chunk is split between two bands and read for each.
  const auto band = static_cast<std::int64_t>(items_per_band(layout_.bytes_per_row()));
  std::int64_t chunk = source.chunk_rows;
  if (chunk <= 0 || chunk > band)
    chunk = static_cast<std::int64_t>(items_per_band(layout_.row_bytes(), k_read_piece_bytes));
  const RowCuts bands{fill, std::max<std::int64_t>(1, band / chunk) * chunk};
  if (tier_ == StorageTier::pinned) {
    load_pinned(source, bands);
  } else {
    load_device(source, bands);
  }
}

void GpuTable::load_device(const TableSource& source, const RowCuts& bands) {
  const std::size_t row_bytes = layout_.row_bytes();
  const std::size_t scale_bytes = layout_.scale_bytes();
  const bool interleaved = pitch_ != row_bytes;  // block scales after each row's codes
  const auto staged = static_cast<std::size_t>(std::min(bands.rows, range_.size()));
  // Rows read into page-locked staging, band k+1 read while band k is copied up: the file
  // and the bus work at once.
  std::array<StagedBand, 2> staging = staged_bands(staged, layout_);
  kernels::DeviceBuffer<std::uint8_t> scratch(interleaved ? staged * (row_bytes + scale_bytes) : 0);
  const kernels::OwnedStream stream;
  // Padding zeroed on the copies' stream, so that it is ordered before them (a stream of
  // its own is not ordered after work on the default stream).
  // Only this rank's part: the rest of rows a group shares is another rank's to fill.
  if (interleaved)
    PLESHARD_CUDA_CHECK(cudaMemsetAsync(rows_ + static_cast<std::size_t>(bands.range.begin - range_.begin) * pitch_, 0,
                                        static_cast<std::size_t>(bands.range.size()) * pitch_, stream.get()));

  const auto read = [&](std::size_t k, StagedBand& s) { read_band(source, layout_, bands.at(k), s); };
  const auto copy = [&](std::size_t k, StagedBand& s) {
    const RowRange b = bands.at(k);
    const auto n = static_cast<std::size_t>(b.size());
    std::uint8_t* to = rows_ + static_cast<std::size_t>(b.begin - range_.begin) * pitch_;
    if (!interleaved) {
      PLESHARD_CUDA_CHECK(cudaMemcpyAsync(to, s.rows.data(), n * row_bytes, cudaMemcpyHostToDevice, stream.get()));
    } else {
      // Up whole, then interleaved on the device by two strided copies.
      std::uint8_t* scales = scratch.data() + n * row_bytes;
      PLESHARD_CUDA_CHECK(
          cudaMemcpyAsync(scratch.data(), s.rows.data(), n * row_bytes, cudaMemcpyHostToDevice, stream.get()));
      PLESHARD_CUDA_CHECK(
          cudaMemcpyAsync(scales, s.scales.data(), n * scale_bytes, cudaMemcpyHostToDevice, stream.get()));
      PLESHARD_CUDA_CHECK(cudaMemcpy2DAsync(to, pitch_, scratch.data(), row_bytes, row_bytes, n,
                                            cudaMemcpyDeviceToDevice, stream.get()));
      PLESHARD_CUDA_CHECK(cudaMemcpy2DAsync(to + row_bytes, pitch_, scales, scale_bytes, scale_bytes, n,
                                            cudaMemcpyDeviceToDevice, stream.get()));
    }
    stream.synchronize();  // the staging band is read again two bands on
  };
  overlap_bands(bands.count(), staging, read, copy);
}

void GpuTable::load_pinned(const TableSource& source, const RowCuts& bands) {
  const std::size_t row_bytes = layout_.row_bytes();
  const std::size_t scale_bytes = layout_.scale_bytes();
  const auto at = [&](std::int64_t row) { return rows_ + static_cast<std::size_t>(row - range_.begin) * pitch_; };
  // Each band read into place, then page-locked while the next is read.
  const auto lock = [&](const RowRange& b) {
    pinned_->lock_through(static_cast<std::size_t>(b.end - range_.begin) * pitch_);
  };
  if (pitch_ == row_bytes) {
    // Straight into the rows, past the page cache where the source allows.
    const RowSource& rows_of = source.past_cache ? source.past_cache->rows : source.rows;
    overlap_bands(
        bands.count(),
        [&](std::size_t k) {
          const RowRange b = bands.at(k);
          rows_of(b.begin, b.end, {at(b.begin), static_cast<std::size_t>(b.size()) * row_bytes}, {});
        },
        [&](std::size_t k) { lock(bands.at(k)); });
  } else {
    // Block-scaled: read into page-locked staging, and interleaved into the rows in pieces over the
    // cores while the next band is read (on the H200 machine an NVFP4 load interleaving
    // after each read ran at 67% of the file's rate; interleaving each piece on the thread
    // that read it, from cache, ran 1.8-3.1 s slower than this over 28.8 GB).
    std::array<StagedBand, 2> staging =
        staged_bands(static_cast<std::size_t>(std::min(bands.rows, range_.size())), layout_);
    const std::size_t pad = pitch_ - row_bytes - scale_bytes;
    const auto read = [&](std::size_t k, StagedBand& s) { read_band(source, layout_, bands.at(k), s); };
    const auto interleave = [&](std::size_t k, StagedBand& s) {
      const RowRange b = bands.at(k);
      const auto n = static_cast<std::size_t>(b.size());
      constexpr std::size_t k_piece = 4096;
      parallel_for((n + k_piece - 1) / k_piece, host_threads(), 1, [&](std::size_t p) {
        std::uint8_t* out = at(b.begin) + p * k_piece * pitch_;
        for (std::size_t r = p * k_piece; r < std::min(n, (p + 1) * k_piece); ++r, out += pitch_) {
          std::memcpy(out, s.rows.data() + r * row_bytes, row_bytes);
          std::memcpy(out + row_bytes, s.scales.data() + r * scale_bytes, scale_bytes);
          std::memset(out + row_bytes + scale_bytes, 0, pad);
        }
      });
      lock(b);
    };
    overlap_bands(bands.count(), staging, read, interleave);
  }
  pinned_->lock_through(static_cast<std::size_t>(range_.size()) * pitch_);  // an empty range has no band
}

GpuTable::~GpuTable() {
  if (tier_ == StorageTier::device && !shared_device_) cudaFree(rows_);
}

kernels::TableView GpuTable::view() const {
  const bool scaled = layout_.scale_bytes() != 0;
  return {layout_.format,
          layout_.head_dim,
          range_.begin,
          range_.end,
          rows_,
          scaled ? rows_ + layout_.row_bytes() : nullptr,
          global_scale_,
          pitch_,
          scaled ? pitch_ : 0};
}

kernels::DistinctRows& GpuTable::distinct(int turn) const {
  auto& rows = distinct_[turn];
  if (!rows) rows = std::make_unique<kernels::DistinctRows>(reads_.uva_blocks_per_sm);
  return *rows;
}

bool GpuTable::gathers_distinct(std::int64_t num_ids) const {
  return tier_ == StorageTier::pinned && num_ids >= k_pinned_group_min_ids;
}

bool GpuTable::gathers_on_host(std::int64_t num_ids, bool capturing) const {
  return tier_ == StorageTier::pinned && pleshard::gathers_on_host(reads_.host, num_ids, capturing);
}

void GpuTable::reserve(std::int64_t max_ids, int turns) const {
  for (int t = 0; t < turns; ++t) {
    if (gathers_on_host(max_ids, false)) {
      distinct(t).reserve_host(view(), max_ids);
    } else if (gathers_distinct(max_ids)) {
      distinct(t).reserve(view(), max_ids);
    }
  }
}

std::uint64_t GpuTable::step_buffer_bytes(std::int64_t max_ids, int turns) const {
  return gathers_distinct(max_ids) || gathers_on_host(max_ids, false)
             ? static_cast<std::uint64_t>(turns) * kernels::DistinctRows::bytes_for(view(), max_ids)
             : 0;
}

std::uint64_t GpuTable::step_host_bytes(std::int64_t max_ids, int turns) const {
  return gathers_on_host(max_ids, false)
             ? static_cast<std::uint64_t>(turns) * kernels::DistinctRows::host_bytes_for(view(), max_ids)
             : 0;
}

void GpuTable::plan_for_host(const std::int64_t* ids, std::int64_t num_ids, cudaStream_t stream) const {
  distinct().plan_for_host(view(), ids, num_ids, stream);
}

std::int64_t GpuTable::gather_gpu_share(cudaStream_t side) const {
  kernels::DistinctRows& rows = distinct();
  const std::int64_t host = shares_with_gpu(reads_.host) ? share_.host_rows(rows.planned_rows()) : rows.planned_rows();
  rows.gather_rest_on_gpu(view(), host, side);
  return host;
}

kernels::DecodeTask GpuTable::gather_on_host(cudaStream_t stream, std::int64_t rows) const {
  return distinct().gather_on_host(view(), reads_.host_threads, stream, rows);
}

kernels::DecodeTask GpuTable::rows_for(const std::int64_t* ids, std::int64_t num_ids, cudaStream_t stream) const {
  if (gathers_distinct(num_ids)) return distinct().gather(view(), ids, num_ids, stream);
  return {view(), ids, num_ids, nullptr};
}

void GpuTable::lookup(const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out,
                      cudaStream_t stream) const {
  kernels::DecodeTask task;
  if (gathers_on_host(num_ids, false)) {
    plan_for_host(ids, num_ids, stream);
    PLESHARD_CUDA_CHECK(cudaStreamSynchronize(stream));
    // One stream: the shares one after the other (the store runs them at once).
    task = gather_on_host(stream, gather_gpu_share(stream));
  } else {
    task = rows_for(ids, num_ids, stream);
  }
  task.out = out;
  kernels::decode_step_cuda({&task, 1}, dtype, stream);
}

}  // namespace pleshard
