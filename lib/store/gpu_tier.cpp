#include "store/gpu_tier.hpp"

#include "exec/cuda_step_space.hpp"
#include "kernels/cuda/cuda_check.hpp"

namespace pleshard {

GpuTier::GpuTier(const TableSource& source, RowRange range, StorageTier tier, StepSpace& space,
                 int uva_blocks_per_sm)
    : table_(source, range, tier, uva_blocks_per_sm), tier_(tier), space_(space), stream_(stream_of(space)), ids_(space) {
  if (tier_ != StorageTier::pinned) return;
  try {
    PLESHARD_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    PLESHARD_CUDA_CHECK(cudaEventCreateWithFlags(&ids_ready_, cudaEventDisableTiming));
    PLESHARD_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  } catch (...) {
    release();
    throw;
  }
}

GpuTier::~GpuTier() { release(); }

void GpuTier::release() noexcept {
  if (side_ != nullptr) cudaStreamSynchronize(side_);
  if (done_ != nullptr) cudaEventDestroy(done_);
  if (ids_ready_ != nullptr) cudaEventDestroy(ids_ready_);
  if (side_ != nullptr) cudaStreamDestroy(side_);
  done_ = ids_ready_ = nullptr;
  side_ = nullptr;
}

void GpuTier::lookup(const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out) {
  table_.lookup(ids, num_ids, dtype, out, stream_);
}

void GpuTier::reserve(std::int64_t num_ids) {
  table_.reserve(num_ids);
  if (tier_ == StorageTier::pinned) ids_.reserve(static_cast<std::size_t>(std::max<std::int64_t>(1, num_ids)) * 8);
}

void GpuTier::start(const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out) {
  if (tier_ != StorageTier::pinned) {
    lookup(ids, num_ids, dtype, out);
    return;
  }
  if (in_flight_) throw SystemError("GpuTier::start: the previous lookup was not finished");
  reserve(num_ids);
  space_.copy(ids_.data(), ids, static_cast<std::size_t>(num_ids) * sizeof(std::int64_t));
  PLESHARD_CUDA_CHECK(cudaEventRecord(ids_ready_, stream_));
  PLESHARD_CUDA_CHECK(cudaStreamWaitEvent(side_, ids_ready_, 0));
  table_.lookup(ids_.as<std::int64_t>(), num_ids, dtype, out, side_);
  PLESHARD_CUDA_CHECK(cudaEventRecord(done_, side_));
  in_flight_ = true;
}

void GpuTier::finish() {
  if (!in_flight_) return;
  PLESHARD_CUDA_CHECK(cudaStreamWaitEvent(stream_, done_, 0));
  in_flight_ = false;
}

}  // namespace pleshard
