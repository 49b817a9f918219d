#include "store/gpu_store.hpp"

#include <algorithm>
#include <vector>

#include "core/collective.hpp"
#include "exec/cuda_step_space.hpp"
#include "kernels/cuda/cuda_check.hpp"

namespace pleshard {

GpuStore::GpuStore(std::span<const TableSource> sources, std::span<const RowRange> ranges, StorageTier tier,
                   StepSpace& space, MPI_Comm share, const PinnedReads& reads)
    : tier_(tier), space_(space), stream_(stream_of(space)) {
  try {
    const bool shared = share != MPI_COMM_NULL;
    for (std::size_t d = 0; d < sources.size(); ++d) {
      if (shared && ranges[d].size() > 0) {
        // A rank that cannot make or read its part fails the group, not only itself; the
        // group's agreement is also the point after which every rank may read every part.
        tables_.push_back(collective_try(
            share, [&] { return std::make_unique<GpuTable>(sources[d], ranges[d], tier, reads, share); }));
      } else {
        tables_.push_back(std::make_unique<GpuTable>(sources[d], ranges[d], tier, reads));
      }
      layouts_.push_back(tables_.back()->layout());
      ranges_.push_back(ranges[d]);
    }
    tasks_.resize(tables_.size());
    if (tier_ == StorageTier::pinned) {
      PLESHARD_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
      PLESHARD_CUDA_CHECK(cudaEventCreateWithFlags(&forked_, cudaEventDisableTiming));
      PLESHARD_CUDA_CHECK(cudaEventCreateWithFlags(&gathered_, cudaEventDisableTiming));
    }
  } catch (...) {
    release();
    throw;
  }
}

GpuStore::~GpuStore() { release(); }

void GpuStore::release() noexcept {
  if (side_ != nullptr) cudaStreamSynchronize(side_);
  if (gathered_ != nullptr) cudaEventDestroy(gathered_);
  if (forked_ != nullptr) cudaEventDestroy(forked_);
  if (side_ != nullptr) cudaStreamDestroy(side_);
  gathered_ = forked_ = nullptr;
  side_ = nullptr;
}

void GpuStore::reserve(std::int64_t max_ids) {
  for (const auto& table : tables_) table->reserve(max_ids);
}

std::uint64_t GpuStore::step_buffer_bytes(std::int64_t max_ids) const {
  std::uint64_t bytes = 0;
  for (const auto& table : tables_) bytes += table->step_buffer_bytes(max_ids);
  return bytes;
}

bool GpuStore::reads_in_place(std::int64_t count) const {
  return std::none_of(tables_.begin(), tables_.end(), [&](const auto& table) {
    return table->gathers_distinct(count) || table->gathers_on_host(count, space_.capturing());
  });
}

void GpuStore::submit(std::span<const RowQuery> queries) {
  check_queries(queries);
  joining_ = false;
  // Tables gathered by the host: every plan enqueued first, then one wait for them all.
  std::vector<std::size_t> on_host;
  const bool capturing = space_.capturing();
  for (std::size_t d = 0; d < tables_.size(); ++d) {
    const RowQuery& q = queries[d];
    if (tables_[d]->tier() == StorageTier::pinned && q.count > 0) {
      const bool host = tables_[d]->gathers_on_host(q.count, capturing);
      ++(host ? counts_.gathered : counts_.uva);
      if (host) {
        tables_[d]->plan_for_host(q.ids, q.count, stream_);
        on_host.push_back(d);
        continue;
      }
    }
    if (!tables_[d]->gathers_distinct(q.count)) {
      tasks_[d] = tables_[d]->rows_for(q.ids, q.count, stream_);  // read in place
      continue;
    }
    fork_side();
    tasks_[d] = tables_[d]->rows_for(q.ids, q.count, side_);
  }
  if (joining_) PLESHARD_CUDA_CHECK(cudaEventRecord(gathered_, side_));
  if (on_host.empty()) return;
  space_.synchronize();  // the plans' distinct rows on the host (watched)
  // The GPU's shares first, every table's on the side stream, so that the GPU reads them
  // while the host gathers its own.
  std::vector<std::int64_t> host_rows(on_host.size());
  for (std::size_t i = 0; i < on_host.size(); ++i) {
    const GpuTable& table = *tables_[on_host[i]];
    fork_side();
    host_rows[i] = table.gather_gpu_share(side_);
    counts_.rows_by_host += host_rows[i];
    counts_.rows_by_gpu += table.planned_rows() - host_rows[i];
  }
  PLESHARD_CUDA_CHECK(cudaEventRecord(gathered_, side_));
  for (std::size_t i = 0; i < on_host.size(); ++i)
    tasks_[on_host[i]] = tables_[on_host[i]]->gather_on_host(stream_, host_rows[i]);
  // Which share was done first sets the next step's split.
  const cudaError_t gpu = cudaEventQuery(gathered_);
  if (gpu != cudaErrorNotReady) PLESHARD_CUDA_CHECK(gpu);
  for (const std::size_t d : on_host) tables_[d]->settle_share(gpu == cudaSuccess);
}

void GpuStore::fork_side() {
  if (joining_) return;
  // The side stream starts once the step's ids are there.
  PLESHARD_CUDA_CHECK(cudaEventRecord(forked_, stream_));
  PLESHARD_CUDA_CHECK(cudaStreamWaitEvent(side_, forked_, 0));
  joining_ = true;
}

std::span<const kernels::DecodeTask> GpuStore::wait() {
  if (joining_) PLESHARD_CUDA_CHECK(cudaStreamWaitEvent(stream_, gathered_, 0));
  joining_ = false;
  return tasks_;
}

}  // namespace pleshard
