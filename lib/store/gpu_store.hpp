#pragma once
// The device and pinned tiers: every table's row range in GPU memory, or in pinned host
// memory. The GPU reads pinned rows through UVA — in place, or for large queries each
// distinct row once over PCIe on a side stream forked from the step's at submit() and
// joined at wait(), on a capped grid so that other work of the step runs beside it — or
// the host gathers a step's distinct rows and copies them up at once (store/host_reads.hpp):
// submit() enqueues the step's row plans, and wait() waits for them, once for every table,
// gathers the rows on the calling thread and copies them up on a stream of their own. The
// pinned tier fetches ahead: with two sets of gather scratch, used in turn, the next step's
// submit and wait run while the GPU still decodes this one's rows. Built only with CUDA.

#include <memory>
#include <optional>
#include <vector>

#include <cuda_runtime_api.h>

#include "ckpt/ple_checkpoint.hpp"
#include "exec/step_space.hpp"
#include "store/gpu_table.hpp"
#include "store/row_store.hpp"

namespace pleshard {

class GpuStore final : public RowStore {
 public:
  // sources[d] and ranges[d]: table d and the rows of it to hold. `space` is a CUDA space;
  // `tier` is device or pinned. Rows with a `share` group (ranks of one node holding the same
  // ranges; collective over it) are held once by the group: pinned in the node's memory,
  // device on the group's one GPU (GpuTable).
  GpuStore(std::span<const TableSource> sources, std::span<const RowRange> ranges, StorageTier tier, StepSpace& space,
           MPI_Comm share = MPI_COMM_NULL, const PinnedReads& reads = {});
  ~GpuStore() override;
  GpuStore(const GpuStore&) = delete;
  GpuStore& operator=(const GpuStore&) = delete;

  [[nodiscard]] StorageTier tier() const { return tier_; }
  void set_fetching_ahead(bool on) override { ahead_ = on && tier_ == StorageTier::pinned; }
  void reserve(std::int64_t max_ids) override;
  [[nodiscard]] std::uint64_t step_buffer_bytes(std::int64_t max_ids) const override;
  [[nodiscard]] std::uint64_t step_host_bytes(std::int64_t max_ids) const override;
  [[nodiscard]] bool reads_in_place(std::int64_t count) const override;
  [[nodiscard]] bool fetches_ahead() const override { return tier_ == StorageTier::pinned; }
  [[nodiscard]] bool fetches_ahead_at(std::int64_t count) const override;
  void submit(std::span<const RowQuery> queries) override;
  [[nodiscard]] std::span<const kernels::DecodeTask> wait() override;
  void abandon() override;
  [[nodiscard]] std::span<const std::uint8_t> host_rows(int layer) const override { return table(layer).host_rows(); }

  [[nodiscard]] HostReadCounts host_reads() const override { return counts_; }

  [[nodiscard]] const GpuTable& table(int layer) const { return *tables_.at(static_cast<std::size_t>(layer)); }

 private:
  void release() noexcept;
  // submit()'s work: each table's plan, in-place read or distinct gather enqueued.
  void enqueue(std::span<const RowQuery> queries);
  // Has the side stream wait for the work enqueued so far, once a step (wait() joins it).
  void fork_side();
  // The host gathers of the last submit: its plans waited for (watched), the GPU's share of
  // each table's rows on the side stream, the host's copied up on the copy stream.
  void gather_on_host();
  // Orders the step's stream after the side and copy streams' work of the last submit.
  void join();
  [[nodiscard]] std::vector<kernels::DecodeTask>& tasks() { return tasks_[turn_]; }

  StorageTier tier_;
  StepSpace& space_;
  cudaStream_t stream_;  // the space's
  HostReadCounts counts_;
  std::vector<std::unique_ptr<GpuTable>> tables_;
  bool ahead_ = false;  // two sets of gather scratch, taken in turn by the submits
  int turn_ = 0;
  std::vector<kernels::DecodeTask> tasks_[2];  // per turn
  std::vector<std::size_t> on_host_;           // the last submit's tables gathered by the host
  cudaStream_t side_ = nullptr;                // pinned: where the GPU gathers distinct rows
  cudaStream_t copies_ = nullptr;              // pinned: where the host's rows go up
  cudaEvent_t forked_ = nullptr;
  cudaEvent_t planned_ = nullptr;  // the last submit's row plans for host gathers
  cudaEvent_t gathered_ = nullptr;
  cudaEvent_t copied_ = nullptr;
  bool joining_ = false;                         // the last submit forked work on the side stream that wait() must join
  bool copying_ = false;                         // its host gathers copied rows up that wait() must join
  std::uint64_t gathers_ = 0;                    // gather_on_host() calls so far
  std::optional<std::uint64_t> failing_gather_;  // the fault plan's (tests)
};

}  // namespace pleshard
