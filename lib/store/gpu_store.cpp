#include "store/gpu_store.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "exec/cuda_step_space.hpp"
#include "kernels/cuda/cuda_check.hpp"

namespace pleshard {

GpuStore::GpuStore(std::span<const TableSource> sources, std::span<const RowRange> ranges, StorageTier tier,
                   StepSpace& space, MPI_Comm share, const PinnedReads& reads)
    : tier_(tier), space_(space), stream_(stream_of(space)), failing_gather_(fault_plan().host_gather_failure) {
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
    for (auto& tasks : tasks_) tasks.resize(tables_.size());
    if (tier_ == StorageTier::pinned) {
      PLESHARD_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
      PLESHARD_CUDA_CHECK(cudaStreamCreateWithFlags(&copies_, cudaStreamNonBlocking));
      for (cudaEvent_t* event : {&forked_, &planned_, &gathered_, &copied_})
        PLESHARD_CUDA_CHECK(cudaEventCreateWithFlags(event, cudaEventDisableTiming));
    }
  } catch (...) {
    release();
    throw;
  }
}

GpuStore::~GpuStore() { release(); }

void GpuStore::release() noexcept {
  for (cudaStream_t* stream : {&side_, &copies_}) {
    if (*stream != nullptr) {
      cudaStreamSynchronize(*stream);
      cudaStreamDestroy(*stream);
    }
    *stream = nullptr;
  }
  for (cudaEvent_t* event : {&forked_, &planned_, &gathered_, &copied_}) {
    if (*event != nullptr) cudaEventDestroy(*event);
    *event = nullptr;
  }
}

void GpuStore::reserve(std::int64_t max_ids) {
  for (const auto& table : tables_) table->reserve(max_ids, ahead_ ? 2 : 1);
}

std::uint64_t GpuStore::step_buffer_bytes(std::int64_t max_ids) const {
  std::uint64_t bytes = 0;
  for (const auto& table : tables_) bytes += table->step_buffer_bytes(max_ids, ahead_ ? 2 : 1);
  return bytes;
}

std::uint64_t GpuStore::step_host_bytes(std::int64_t max_ids) const {
  std::uint64_t bytes = 0;
  for (const auto& table : tables_) bytes += table->step_host_bytes(max_ids, ahead_ ? 2 : 1);
  return bytes;
}

bool GpuStore::reads_in_place(std::int64_t count) const {
  return std::none_of(tables_.begin(), tables_.end(), [&](const auto& table) {
    return table->gathers_distinct(count) || table->gathers_on_host(count, space_.capturing());
  });
}

bool GpuStore::fetches_ahead_at(std::int64_t count) const {
  // Every table's rows in its own scratch, keyed there (a table holding no rows decodes
  // zeros whatever its keys).
  const bool capturing = space_.capturing();
  return tier_ == StorageTier::pinned &&
         (count == 0 || std::all_of(tables_.begin(), tables_.end(), [&](const auto& table) {
            return table->range().size() == 0 || table->gathers_distinct(count) ||
                   table->gathers_on_host(count, capturing);
          }));
}

void GpuStore::submit(std::span<const RowQuery> queries) {
  check_queries(queries);
  join();  // nothing, unless a submit was neither waited for nor abandoned
  // The step before's rows stay in the other set until its decode (fetching ahead).
  if (ahead_) turn_ ^= 1;
  on_host_.clear();
  try {
    enqueue(queries);
  } catch (...) {
    abandon();
    throw;
  }
}

void GpuStore::enqueue(std::span<const RowQuery> queries) {
  const bool capturing = space_.capturing();
  for (std::size_t d = 0; d < tables_.size(); ++d) {
    GpuTable& table = *tables_[d];
    table.use_turn(turn_);
    const RowQuery& q = queries[d];
    if (table.tier() == StorageTier::pinned && q.count > 0) {
      const bool host = table.gathers_on_host(q.count, capturing);
      ++(host ? counts_.gathered : counts_.uva);
      if (host) {
        // Tables gathered by the host: every plan enqueued here, waited for once in wait().
        table.plan_for_host(q.ids, q.count, stream_);
        on_host_.push_back(d);
        continue;
      }
    }
    if (!table.gathers_distinct(q.count)) {
      tasks()[d] = table.rows_for(q.ids, q.count, stream_);  // read in place
      continue;
    }
    fork_side();
    tasks()[d] = table.rows_for(q.ids, q.count, side_);
  }
  if (joining_) PLESHARD_CUDA_CHECK(cudaEventRecord(gathered_, side_));
  if (!on_host_.empty()) PLESHARD_CUDA_CHECK(cudaEventRecord(planned_, stream_));
}

void GpuStore::fork_side() {
  if (joining_) return;
  // The side stream starts once the step's ids are there.
  PLESHARD_CUDA_CHECK(cudaEventRecord(forked_, stream_));
  PLESHARD_CUDA_CHECK(cudaStreamWaitEvent(side_, forked_, 0));
  joining_ = true;
}

std::span<const kernels::DecodeTask> GpuStore::wait() {
  try {
    if (!on_host_.empty()) gather_on_host();
  } catch (...) {
    abandon();
    throw;
  }
  join();
  return tasks();
}

void GpuStore::abandon() {
  on_host_.clear();
  // Joined now rather than by the next submit, which may be the first of a CUDA graph's
  // capture: a capture may not wait for work enqueued before it began. Errors are left to
  // the step's stream to report: this runs while another error unwinds.
  if (joining_) {
    cudaEventRecord(gathered_, side_);
    cudaStreamWaitEvent(stream_, gathered_, 0);
  }
  if (copying_) {
    cudaEventRecord(copied_, copies_);
    cudaStreamWaitEvent(stream_, copied_, 0);
  }
  joining_ = copying_ = false;
}

void GpuStore::gather_on_host() {
  const std::vector<std::size_t> on_host = std::exchange(on_host_, {});
  space_.synchronize_to(planned_);  // the plans' distinct rows on the host (watched)
  // Both streams start from the plans, not from whatever the step's stream holds by now
  // (fetching ahead: the step before's decode). The turn's block and staging were last read
  // by the decode of two steps back, which the step's stream ran before these plans.
  PLESHARD_CUDA_CHECK(cudaStreamWaitEvent(side_, planned_, 0));
  PLESHARD_CUDA_CHECK(cudaStreamWaitEvent(copies_, planned_, 0));
  joining_ = copying_ = true;
  std::vector<std::int64_t> host_rows(on_host.size());
  // The GPU's shares first, every table's on the side stream, so that the GPU reads them
  // while the host gathers its own. (A failure here is abandon()ed by wait().)
  for (std::size_t i = 0; i < on_host.size(); ++i) {
    const GpuTable& table = *tables_[on_host[i]];
    host_rows[i] = table.gather_gpu_share(side_);
    counts_.rows_by_host += host_rows[i];
    counts_.rows_by_gpu += table.planned_rows() - host_rows[i];
  }
  PLESHARD_CUDA_CHECK(cudaEventRecord(gathered_, side_));
  if (failing_gather_ == gathers_++) throw SystemError("a host gather of pinned rows failed (fault injected)");
  for (std::size_t i = 0; i < on_host.size(); ++i)
    tasks()[on_host[i]] = tables_[on_host[i]]->gather_on_host(copies_, host_rows[i]);
  PLESHARD_CUDA_CHECK(cudaEventRecord(copied_, copies_));
  // Which share was done first sets the next step's split.
  const cudaError_t gpu = cudaEventQuery(gathered_);
  if (gpu != cudaErrorNotReady) PLESHARD_CUDA_CHECK(gpu);
  for (const std::size_t d : on_host) tables_[d]->settle_share(gpu == cudaSuccess);
}

void GpuStore::join() {
  if (joining_) PLESHARD_CUDA_CHECK(cudaStreamWaitEvent(stream_, gathered_, 0));
  if (copying_) PLESHARD_CUDA_CHECK(cudaStreamWaitEvent(stream_, copied_, 0));
  joining_ = copying_ = false;
}

}  // namespace pleshard
