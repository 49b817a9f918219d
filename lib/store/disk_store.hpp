#pragma once
// The disk tier: no table in memory but block scales (NVFP4, FP8-E8M0). Each step plans its
// rows (exec/step_row_plans.hpp) where its ids are — on the GPU, where there is one and the
// store has been reserved for the step's size, so that only the distinct rows' offsets come
// down and each id's key stays there — then reads each distinct row of every layer once from
// the checkpoint's files (every layer's reads in flight together), and stages the raw rows
// into the step space, where the step's decode reads them. submit() starts the reads (on
// the store's worker thread where the format reads its files itself) and returns once the
// rest of the staging (the rows' block scales, and each id's key where the plan was made on
// the host) is done beside them; wait() waits for the reads and stages the rows. Alone,
// every table is held whole (each rank reads the rows of its own tokens), so nothing needs
// combining across ranks; beside tables of other tiers (store/placement.hpp) a rank reads
// its range of rows, as they hold theirs, and the exchange combines them.
//
// Block-scaled rows keep their codes and block scales in separate tensors, so each row would
// be two random reads; the scales (a ninth of an NVFP4 table's bytes at 160 values a row, a
// 33rd of an FP8-E8M0 one's) are read once, whole, when the store opens, and a step reads
// codes only.

#include <cstdint>
#include <optional>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "core/host_memory.hpp"
#include "core/worker.hpp"
#include "exec/step_row_plans.hpp"
#include "exec/step_space.hpp"
#include "store/row_store.hpp"

namespace pleshard {

class DiskStore final : public RowStore {
 public:
  // `checkpoint` must outlive the store and must not read collectively. Its files are read on
  // the store's thread between submit() and wait() where the format reads them itself
  // (PleCheckpoint::reads_row_sets_on_any_thread); through HDF5 in submit() itself (the
  // library is not thread-safe, and through MPI-IO it calls MPI, initialised for one thread).
  // Holds rows `ranges[d]` of table d (ids outside decode to zeros). Reads the block scales
  // of those rows (tier_bytes of the disk tier; the caller checks they fit). Steps read
  // through the page cache, or past it (`reads`: PageCache::bypass, O_DIRECT).
  DiskStore(const PleCheckpoint& checkpoint, std::span<const RowRange> ranges, StepSpace& space,
            PageCache reads = PageCache::use);
  // Every table whole.
  DiskStore(const PleCheckpoint& checkpoint, StepSpace& space, PageCache reads = PageCache::use)
      : DiskStore(checkpoint, whole_tables(checkpoint), space, reads) {}

  [[nodiscard]] static std::vector<RowRange> whole_tables(const PleCheckpoint& checkpoint);

  // Steps of up to `max_ids` ids a layer are planned on the GPU (in a GPU's space); larger
  // ones, and every step of a store not reserved, on the host. The staging of both turns is
  // allocated here for such steps, so that none of them allocates. Only grows: a call for no
  // more ids than reserved before changes nothing (the plans of the steps in flight hold
  // their keys); a larger one must not come between a submit and the decode of its rows.
  void reserve(std::int64_t max_ids) override;
  // Both turns' plans and staging for steps of `max_ids` ids a layer.
  [[nodiscard]] std::uint64_t step_buffer_bytes(std::int64_t max_ids) const override;
  // Where the files are read on the store's thread (PleCheckpoint::
  // reads_row_sets_on_any_thread: safetensors, HDF5 located past the library): a next
  // step's reads then run beside this step's decode. submit() has planned the ids when it
  // returns, and a step's plans and rows are kept in one of two sets, taken in turn by the
  // submits (twice a step's staging in memory). Files read through HDF5 are read in submit()
  // itself, so nothing would run beside them.
  [[nodiscard]] bool fetches_ahead() const override { return checkpoint_.reads_row_sets_on_any_thread(); }
  void submit(std::span<const RowQuery> queries) override;
  [[nodiscard]] std::span<const kernels::DecodeTask> wait() override;

  // Rows read for the layer by the last submit (its distinct ids inside the table).
  [[nodiscard]] std::int64_t rows_read(int layer) const {
    return static_cast<std::int64_t>(distinct_.at(static_cast<std::size_t>(layer)).size());
  }
  // Whether the last submit's rows were planned on the GPU.
  [[nodiscard]] bool planned_on_gpu() const { return planned_on_gpu_; }
  // The space's memory the plans and staging hold now (step_buffer_bytes once reserved).
  [[nodiscard]] std::uint64_t step_bytes_held() const;

 private:
  // What a step's decode reads of a layer, in the space.
  struct Staged {
    explicit Staged(StepSpace& space) : keys(space), rows(space), scales(space) {}
    SpaceBuffer keys;    // each id's position among the distinct rows, -1 outside the table (host plans')
    SpaceBuffer rows;    // the distinct rows
    SpaceBuffer scales;  // and their block scales (block-scaled formats)
  };
  // One layer's staging, kept between steps.
  struct Staging {
    explicit Staging(StepSpace& space) : staged{Staged(space), Staged(space)} {}
    std::vector<std::int64_t> host_ids;  // the ids copied down, for a plan on the host of a GPU's step
    std::vector<std::uint8_t> host_rows;
    std::vector<std::uint8_t> host_scales;
    Staged staged[2];        // the last two submits', in turn (fetches_ahead)
    HostBytes table_scales;  // the range's rows' block scales (block-scaled formats)
  };

  // Both turns' plans for steps of up to `max_ids` ids a layer (0: on the host only).
  void make_plans(std::int64_t max_ids);
  // The owners' bounds of each layer's plans: one owner, my range.
  [[nodiscard]] std::vector<std::vector<std::int64_t>> plan_bounds() const;
  // The staging one turn of a step of up to `max_ids` ids keeps for the layer in the space:
  // its distinct rows (at most its range's), their block scales, and each id's key where
  // steps are planned on the host of a GPU.
  struct StagedBytes {
    std::size_t keys = 0, rows = 0, scales = 0;
  };
  [[nodiscard]] StagedBytes staged_bytes(std::size_t layer, std::int64_t max_ids, bool gpu_plans) const;
  // Plans every layer's rows with plans_[turn_], into distinct_.
  void plan(std::span<const RowQuery> queries);
  // What a layer's decode needs but its rows: each id's key and the rows' block scales, in
  // the step space.
  void stage_keys(int layer, const RowQuery& query);

  const PleCheckpoint& checkpoint_;
  StepSpace& space_;
  PageCache reads_;
  std::vector<Staging> layers_;
  std::vector<std::vector<std::int64_t>> distinct_;  // per layer, the rows the last submit reads, ascending
  std::vector<PleCheckpoint::RowSet> sets_;          // the reads in flight, into each layer's host_rows
  int turn_ = 1;                                     // the staged buffers, plans and tasks of the last submit
  // Per turn, every layer's row plans against its range: a decode reads its keys in the plan
  // (but for a host plan of a GPU's step, staged), so they too stay until the submit after
  // next.
  std::unique_ptr<StepRowPlans> plans_[2];
  std::int64_t planned_ids_ = 0;  // the most ids a layer that plans_ plan on the GPU (reserve)
  bool planned_on_gpu_ = false;
  std::uint64_t submits_ = 0;
  std::optional<std::uint64_t> failing_submit_;  // the fault plan's (tests)
  std::vector<kernels::DecodeTask> tasks_[2];
  Worker reader_;  // last: its job reads the members above, so it stops first
};

}  // namespace pleshard
