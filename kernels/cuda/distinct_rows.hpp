#pragma once
// Each distinct row of a lookup read once, for tables behind a slow link (pinned host memory
// over PCIe): the lookup's row plan (kernels/cuda/row_plan_cuda.hpp: its distinct ids in
// address order, every id keyed to one of them), then the distinct rows gathered into a
// packed device block in that order; the step's fused decode reads the block with the
// plan's keys (one decode core for every tier). Every stage is a kernel or a CUB call on
// the stream with scratch sized up front, so it can be captured in a CUDA graph. The gather over the slow link runs on
// a capped grid: PCIe is saturated by far fewer warps than a full GPU holds, and the SMs left free run other work
// (decoding, the device tier, the exchange) beside it.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/common/row_decode.hpp"
#include "kernels/cuda/row_plan_cuda.hpp"

namespace pleshard::kernels {

// Resident blocks per SM of the gather over the slow link; 0 lifts the cap. On the H200 at
// 1M ids, one block per SM cost the pinned lookup 2% (bf16) to 6% (nvfp4) and hid 74-87% of
// device lookups running beside it, against 2-7% uncapped (docs/performance.md).
inline constexpr int k_uva_gather_blocks_per_sm = 1;

class DistinctRows {
 public:
  explicit DistinctRows(int gather_blocks_per_sm = k_uva_gather_blocks_per_sm)
      : gather_blocks_per_sm_(gather_blocks_per_sm) {}
  ~DistinctRows();
  DistinctRows(const DistinctRows&) = delete;
  DistinctRows& operator=(const DistinctRows&) = delete;

  // Scratch for up to `max_ids` ids of `table` (its format, width and rows).
  void reserve(const TableView& table, std::int64_t max_ids);
  // The device memory reserve() allocates for `max_ids` ids of `table`.
  [[nodiscard]] static std::size_t bytes_for(const TableView& table, std::int64_t max_ids);
  // The rows `ids` name that `table` holds, each read once into a packed block: a task that
  // decodes them (keys index the block; -1 where `table` holds no row) with out and count
  // left to the caller. Valid until the next gather. `table` spans fewer than
  // k_max_distinct_rows rows; at most 2^31 - 1 ids (CUB's sizes are int).
  [[nodiscard]] DecodeTask gather(const TableView& table, const std::int64_t* ids, std::int64_t num_ids,
                                  cudaStream_t stream);
  // gather, then decode into `out` (as lookup_rows_cuda).
  void lookup(const TableView& table, const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out,
              cudaStream_t stream);

  // The same block made by the host instead (store/host_reads.hpp), for a table in host
  // memory: plan_for_host enqueues the plan and the copy of its distinct offsets to the host;
  // once the caller has waited for the stream, gather_on_host copies the first `rows` of
  // those rows (all where negative) out of the table on `threads` host threads into pinned
  // staging and enqueues their copies to the block, in pieces as they are gathered, and
  // gather_rest_on_gpu has the GPU gather the rows from `first` on into the same block
  // through UVA (a share each, at once: GatherShare). The staging is rewritten by the next
  // gather_on_host, so the caller waits for the stream between two (the next plan's wait
  // does). The task is gather's, valid once both shares are in.
  void plan_for_host(const TableView& table, const std::int64_t* ids, std::int64_t num_ids, cudaStream_t stream);
  // The distinct rows of the last plan_for_host, once the caller has waited for its stream.
  [[nodiscard]] std::int64_t planned_rows() const;
  [[nodiscard]] DecodeTask gather_on_host(const TableView& table, std::size_t threads, cudaStream_t stream,
                                          std::int64_t rows = -1);
  void gather_rest_on_gpu(const TableView& table, std::int64_t first, cudaStream_t stream);
  // The pinned host memory reserve_host() allocates for `max_ids` ids of `table`.
  [[nodiscard]] static std::size_t host_bytes_for(const TableView& table, std::int64_t max_ids);
  // reserve, and the host's staging for host gathers.
  void reserve_host(const TableView& table, std::int64_t max_ids);

 private:
  void release() noexcept;

  int gather_blocks_per_sm_;
  int gather_max_blocks_ = 1 << 16;  // set by reserve from the device's SMs
  DeviceRowPlan plan_;
  std::int64_t capacity_ = 0;
  std::size_t row_bytes_ = 0;
  std::size_t scale_bytes_ = 0;
  void* memory_ = nullptr;  // the packed block: rows, then block scales
  std::uint8_t* staged_rows_ = nullptr;
  std::uint8_t* staged_scales_ = nullptr;
  // Host gathers: pinned memory holding the plan's distinct count and offsets copied down,
  // then the block as the host fills it (the device block's layout).
  void* host_memory_ = nullptr;
  std::int64_t host_capacity_ = 0;
  std::int64_t planned_ids_ = 0;  // the last plan_for_host's lookups
};

}  // namespace pleshard::kernels
