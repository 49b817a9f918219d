#pragma once
// The device and pinned tiers: every table's row range in GPU memory, or in pinned host
// memory. The GPU reads pinned rows through UVA — in place, or for large queries each
// distinct row once over PCIe on a side stream forked from the step's at submit() and
// joined at wait(), on a capped grid so that other work of the step runs beside it — or
// the host gathers a step's distinct rows and copies them up at once (store/host_reads.hpp):
// submit() then waits for the step's row plans, once for every table. Built only with CUDA.

#include <memory>
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
  void reserve(std::int64_t max_ids) override;
  [[nodiscard]] std::uint64_t step_buffer_bytes(std::int64_t max_ids) const override;
  [[nodiscard]] bool reads_in_place(std::int64_t count) const override;
  void submit(std::span<const RowQuery> queries) override;
  [[nodiscard]] std::span<const kernels::DecodeTask> wait() override;
  [[nodiscard]] std::span<const std::uint8_t> host_rows(int layer) const override { return table(layer).host_rows(); }

  [[nodiscard]] HostReadCounts host_reads() const override { return counts_; }

  [[nodiscard]] const GpuTable& table(int layer) const { return *tables_.at(static_cast<std::size_t>(layer)); }

 private:
  void release() noexcept;
  // Has the side stream wait for the work enqueued so far, once a step (wait() joins it).
  void fork_side();

  StorageTier tier_;
  StepSpace& space_;
  cudaStream_t stream_;  // the space's
  HostReadCounts counts_;
  std::vector<std::unique_ptr<GpuTable>> tables_;
  std::vector<kernels::DecodeTask> tasks_;
  cudaStream_t side_ = nullptr;  // pinned: where distinct rows are gathered
  cudaEvent_t forked_ = nullptr;
  cudaEvent_t gathered_ = nullptr;
  bool joining_ = false;  // the last submit forked work that wait() must join
};

}  // namespace pleshard
