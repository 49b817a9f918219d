#pragma once
// One table's row range in GPU memory (device), or in pinned host memory read by the same
// kernels through UVA (pinned). Built only with CUDA.

#include <cstdint>
#include <memory>

#include <cuda_runtime_api.h>

#include "ckpt/ple_checkpoint.hpp"
#include "kernels/cuda/distinct_rows.hpp"
#include "store/device_rows.hpp"
#include "store/host_reads.hpp"
#include "store/pinned_rows.hpp"
#include "store/row_range.hpp"
#include "store/storage_tier.hpp"

namespace pleshard {

// How the GPU reads a pinned table's rows.
struct PinnedReads {
  HostReads host = HostReads::automatic;  // through UVA, or gathered by the host (store/host_reads.hpp)
  int uva_blocks_per_sm = kernels::k_uva_gather_blocks_per_sm;  // cap of UVA distinct-row gathers (0: none)
  std::size_t host_threads = 1;                                 // threads of a host gather
  // The host's share of a shared gather's rows (HostReads::both, auto): in [0, 1] fixed
  // there, negative balanced step by step (GatherShare).
  double host_share = -1.0;
};

class GpuTable {
 public:
  // Takes rows [range.begin, range.end) of the table `source` produces: read in bands of
  // about 64 MiB (whole chunks of the source's) through two page-locked staging buffers,
  // reading one band while copying the other (pinned: read in place, past the page cache
  // where the source allows, or interleaved there from staging (block-scaled formats), each band
  // page-locked while the next is read), or, for synthetic tables, made in place on the
  // GPU. Block-scaled rows carry their
  // block scales after the codes (TableView::row_pitch). Throws InputError for a pinned
  // range of 2^32 - 1 rows or more (distinct-row gathers key rows in 32 bits).
  // `tier` is StorageTier::device or StorageTier::pinned; `reads` says how the GPU reads
  // pinned rows (through UVA, its distinct-row gathers on a capped grid, or gathered by the
  // host). Pinned rows with a `share` group (ranks of one node holding the same range;
  // collective over it) lie in one segment of the node, each rank filling a balanced part of
  // the rows and locking all of them; device rows with a `share` group (ranks of one node
  // reading each other's rows: `--exchange peer-read`) lie in one range every rank maps, its
  // pages in a part on each rank's GPU (SharedDeviceRows), each rank filling its balanced
  // part of the rows; the group must agree (collective_try) before any rank reads them.
  GpuTable(const TableSource& source, RowRange range, StorageTier tier, const PinnedReads& reads = {},
           MPI_Comm share = MPI_COMM_NULL);
  ~GpuTable();
  GpuTable(const GpuTable&) = delete;
  GpuTable& operator=(const GpuTable&) = delete;

  [[nodiscard]] kernels::TableView view() const;  // device-accessible pointers
  [[nodiscard]] StorageTier tier() const { return tier_; }
  [[nodiscard]] const TableLayout& layout() const { return layout_; }
  [[nodiscard]] RowRange range() const { return range_; }
  // The pinned tier's rows in host memory; empty on the device.
  [[nodiscard]] std::span<const std::uint8_t> host_rows() const {
    return pinned_ ? std::span<const std::uint8_t>(pinned_->data(), pinned_->size()) : std::span<const std::uint8_t>();
  }
  // Whether a lookup of `num_ids` ids reads each distinct row once through UVA (pinned,
  // large lookups read by the GPU).
  [[nodiscard]] bool gathers_distinct(std::int64_t num_ids) const;
  // Whether a lookup of `num_ids` ids is gathered by the host (pinned; PinnedReads::host),
  // never while a CUDA graph captures it.
  [[nodiscard]] bool gathers_on_host(std::int64_t num_ids, bool capturing) const;
  // A host gather's parts: the plan and its distinct offsets' copy enqueued on `stream`;
  // then, once the caller has waited for the stream, the GPU's share of the rows (shared
  // reads) gathered on `side` through UVA, which returns the rows left to the host; then
  // those gathered by the host and their copy to the GPU enqueued on `stream`
  // (kernels::DistinctRows). The decode reads the block once both streams are there; then
  // settle_share says which share was done first.
  void plan_for_host(const std::int64_t* ids, std::int64_t num_ids, cudaStream_t stream) const;
  [[nodiscard]] std::int64_t gather_gpu_share(cudaStream_t side) const;
  [[nodiscard]] std::int64_t planned_rows() const { return distinct().planned_rows(); }
  [[nodiscard]] kernels::DecodeTask gather_on_host(cudaStream_t stream, std::int64_t rows = -1) const;
  void settle_share(bool gpu_finished_first) const { share_.settle(gpu_finished_first); }
  // The host's share of the next shared gather (PinnedReads::host_share).
  [[nodiscard]] double host_share() const { return share_.share(); }
  // Allocates now what lookups of up to `max_ids` ids need (before any graph capture): the
  // scratch of distinct-row gathers in `turns` sets, so that a step's gather may run while
  // the step before's rows, in the other set, are decoded (use_turn).
  void reserve(std::int64_t max_ids, int turns = 1) const;
  // What reserve(max_ids, turns) allocates in GPU memory (RowStore::step_buffer_bytes) and
  // page-locked in host memory (RowStore::step_host_bytes).
  [[nodiscard]] std::uint64_t step_buffer_bytes(std::int64_t max_ids, int turns = 1) const;
  [[nodiscard]] std::uint64_t step_host_bytes(std::int64_t max_ids, int turns = 1) const;
  // The set of scratch the next distinct-row gathers and host gathers use (0 or 1): a
  // gather's block stays valid while the other set gathers.
  void use_turn(int turn) const { turn_ = turn; }

  // Where the decode of `ids` finds its rows: the table in place, or (gathers_distinct)
  // a block of the distinct rows gathered on `stream`. The task's out is left unset.
  [[nodiscard]] kernels::DecodeTask rows_for(const std::int64_t* ids, std::int64_t num_ids, cudaStream_t stream) const;
  // rows_for (or a host gather, waiting for `stream`), then decode into `out`
  // (device-accessible), on `stream`.
  void lookup(const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out, cudaStream_t stream) const;

 private:
  // A turn's scratch (the current one's: use_turn), made on first use.
  [[nodiscard]] kernels::DistinctRows& distinct(int turn) const;
  [[nodiscard]] kernels::DistinctRows& distinct() const { return distinct(turn_); }
  // Rows `fill` of the range: all of it, or this rank's part of rows a group shares.
  void make_synthetic(int ple_index, std::uint64_t seed, RowRange fill);
  void load(const TableSource& source, RowRange fill);
  void load_device(const TableSource& source, const RowCuts& bands);
  void load_pinned(const TableSource& source, const RowCuts& bands);

  TableLayout layout_;
  RowRange range_;
  StorageTier tier_;
  PinnedReads reads_;
  mutable GatherShare share_;  // of shared gathers (HostReads::both, auto)
  float global_scale_ = 1.0f;
  std::size_t pitch_ = 0;         // bytes per row: codes, then (block-scaled) scales and padding
  std::uint8_t* rows_ = nullptr;  // device: owned, or shared_device_'s; pinned: pinned_'s
  std::unique_ptr<SharedDeviceRows> shared_device_;
  std::unique_ptr<PinnedRows> pinned_;
  // Scratch of the pinned tier's distinct-row gathers, one set per turn (one gather in
  // flight per set).
  mutable std::unique_ptr<kernels::DistinctRows> distinct_[2];
  mutable int turn_ = 0;
};

// Lookups of at least this many ids from pinned memory read each distinct row once. On the
// H200 with uniform ids over 1M rows, that cost 1.8x at 8192 ids (sorting, nearly no
// repeats) and saved 1.75x at 1M ids (63% distinct rows, read in address order).
inline constexpr std::int64_t k_pinned_group_min_ids = 1 << 17;

}  // namespace pleshard
