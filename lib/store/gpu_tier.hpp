#pragma once
// The device and pinned tiers as TableTiers of a CUDA step space. The pinned tier's
// start() copies the ids into a buffer of its own and runs the lookup on a side stream
// once they are ready, so the PCIe-bound lookup overlaps the space's other work; finish()
// makes the space's stream wait for it. Built only with CUDA.

#include <cstdint>

#include <cuda_runtime_api.h>

#include "exec/step_space.hpp"
#include "store/gpu_table.hpp"
#include "store/table_tier.hpp"

namespace pleshard {

class GpuTier final : public TableTier {
 public:
  // `space` is a CUDA space (make_cuda_space); `tier` is device or pinned; the pinned
  // gather's SM cap as GpuTable's.
  GpuTier(const TableSource& source, RowRange range, StorageTier tier, StepSpace& space,
          int uva_blocks_per_sm = kernels::k_uva_gather_blocks_per_sm);
  ~GpuTier() override;
  GpuTier(const GpuTier&) = delete;
  GpuTier& operator=(const GpuTier&) = delete;

  [[nodiscard]] StorageTier tier() const override { return tier_; }
  [[nodiscard]] const TableLayout& layout() const override { return table_.layout(); }
  [[nodiscard]] RowRange range() const override { return table_.range(); }

  void lookup(const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out) override;
  void start(const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out) override;
  void finish() override;

  // Allocates what lookups of up to `num_ids` ids need now, before any graph capture.
  void reserve(std::int64_t num_ids);

 private:
  void release() noexcept;

  GpuTable table_;
  StorageTier tier_;
  StepSpace& space_;
  cudaStream_t stream_;           // the space's
  cudaStream_t side_ = nullptr;   // pinned: where start() runs the lookup
  cudaEvent_t ids_ready_ = nullptr;
  cudaEvent_t done_ = nullptr;
  SpaceBuffer ids_;               // pinned: the ids of the lookup in flight
  bool in_flight_ = false;
};

}  // namespace pleshard
