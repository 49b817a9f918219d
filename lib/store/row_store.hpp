#pragma once
// The storage tiers as row stores (docs/design.md §6): every PLE table of a model as one tier
// holds it, each reduced to the rows a rank owns. A step asks for the rows of every layer
// at once and decodes them itself, in one fused launch (exec/step_kernels.hpp), from
// wherever the store leaves them: the table in place (device, pinned, host), or a block of
// raw stored bytes (codes and scales) fetched for the step (the pinned tier's large
// lookups, the disk tier). submit() starts the fetch and wait() hands out the rows, so a
// fetch runs beside whatever the step does in between.

#include <cstdint>
#include <span>
#include <vector>

#include "format/row_format.hpp"
#include "store/row_range.hpp"
#include "store/storage_tier.hpp"

namespace pleshard {

// One layer's lookups of a step: ids of the layer's table, in the step space.
struct RowQuery {
  const std::int64_t* ids = nullptr;
  std::int64_t count = 0;
  // A one-off read of many rows close together, likely from a cold disk (a row cache's
  // static fill) rather than a step's: the disk tier then reads across wider gaps.
  bool bulk = false;
};

class RowStore {
 public:
  virtual ~RowStore() = default;

  [[nodiscard]] int layers() const { return static_cast<int>(layouts_.size()); }
  [[nodiscard]] const TableLayout& layout(int layer) const { return layouts_.at(static_cast<std::size_t>(layer)); }
  // The rows of the layer's table this store holds; ids outside decode to zeros.
  [[nodiscard]] RowRange range(int layer) const { return ranges_.at(static_cast<std::size_t>(layer)); }

  // Allocates now what steps of up to `max_ids` ids per layer need, so that no step
  // allocates (and a step can be captured in a CUDA graph).
  virtual void reserve(std::int64_t max_ids) { (void)max_ids; }
  // Bytes of the step space's memory that reserve(max_ids) allocates for the steps' staging
  // and scratch (not the tables, nor a row cache: CachedStore::bytes): asked before it is
  // called, so that the engine checks they fit first.
  [[nodiscard]] virtual std::uint64_t step_buffer_bytes(std::int64_t max_ids) const {
    (void)max_ids;
    return 0;
  }
  // Bytes of page-locked host memory that reserve(max_ids) allocates beside those for the
  // steps' staging (the pinned tier's host gathers), asked first alike: they come out of
  // the node's memory beside the host-resident tables.
  [[nodiscard]] virtual std::uint64_t step_host_bytes(std::int64_t max_ids) const {
    (void)max_ids;
    return 0;
  }
  // Whether the lookups of a step of `count` ids a layer are the tables read in place, keyed
  // by the queries' ids themselves, with nothing read before the decode: then the ids need
  // not exist before the decode, which may hash them itself (hash_and_decode_step).
  [[nodiscard]] virtual bool reads_in_place(std::int64_t count) const {
    (void)count;
    return false;
  }

  // Whether the next step's fetch may start before this step's rows are decoded: the store
  // has read the queries' ids when wait() returns (or reads them, in the space's stream
  // order, before anything enqueued after it: the next step's hash), and the rows a wait()
  // handed out stay valid until the submit after next, so that submit, wait, submit (the
  // next step's), then the decode of the first is a valid order. The engine then begins a step's fetch while
  // the step before is decoded (StepRunner: the disk tier reads the next step's rows while
  // the GPU or the host's cores decode this one's).
  [[nodiscard]] virtual bool fetches_ahead() const { return false; }
  // Whether, after a step of `count` ids a layer, the next step's fetch may start before its
  // decode: false where some of its rows are read in place, keyed by the queries' ids (the
  // pinned tier's small lookups), which the next step's hash rewrites.
  [[nodiscard]] virtual bool fetches_ahead_at(std::int64_t count) const {
    (void)count;
    return fetches_ahead();
  }
  // Whether the engine will begin steps ahead; told before step_buffer_bytes() and
  // reserve(), so that a store that needs a second set of scratch for it (the pinned tier's
  // gathers) sizes and allocates that set only then.
  virtual void set_fetching_ahead(bool on) { (void)on; }

  // How the lookups of tables in host memory were read so far, one count per table and
  // step (the pinned tier: store/host_reads.hpp); none for other tiers.
  struct HostReadCounts {
    std::int64_t gathered = 0;  // gathered by the host (alone or beside the GPU), copied up
    std::int64_t uva = 0;       // read by the GPU through UVA
    // Of the gathered lookups' distinct rows, those the host copied and those the GPU read
    // beside it (HostReads::both, auto).
    std::int64_t rows_by_host = 0;
    std::int64_t rows_by_gpu = 0;
    HostReadCounts& operator+=(const HostReadCounts& o) {
      gathered += o.gathered;
      uva += o.uva;
      rows_by_host += o.rows_by_host;
      rows_by_gpu += o.rows_by_gpu;
      return *this;
    }
  };
  [[nodiscard]] virtual HostReadCounts host_reads() const { return {}; }

  // Where the layer's rows lie in host memory (the host and pinned tiers: rows and block
  // scales), for the measure of the pages behind them (store/table_pages.hpp); empty where
  // the store keeps them elsewhere.
  [[nodiscard]] virtual std::span<const std::uint8_t> host_rows(int layer) const {
    (void)layer;
    return {};
  }

  // Starts fetching the rows of queries[d] for every layer d. The ids stay unchanged until
  // wait() returns (and, on a GPU, until the work enqueued before it is done).
  virtual void submit(std::span<const RowQuery> queries) = 0;
  // Forgets the last submit, never to be waited for (a step abandoned after a failure):
  // whatever it left in flight is ordered before the space's next work now, outside any
  // CUDA graph capture the next step may begin.
  virtual void abandon() {}
  // Per layer: where the decode finds the rows of the last submit — a task with rows, keys
  // and count set, out left to the caller — ready for the space's next work and valid until
  // the next submit (fetches_ahead: the submit after next).
  [[nodiscard]] virtual std::span<const kernels::DecodeTask> wait() = 0;

  // A store of parts that fetch on their own (tables placed on several tiers): how many,
  // fastest first, which layers each holds, and one part's fetch alone, so that a step can
  // decode one part's layers while the next part fetches (PleEngine::start). A step submits
  // and waits for every part once, in order, or for the whole store once; the layers of the
  // other parts get tasks of no rows. A store of one part is itself.
  [[nodiscard]] virtual int parts() const { return 1; }
  [[nodiscard]] virtual bool part_holds(int part, int layer) const {
    (void)part;
    (void)layer;
    return true;
  }
  virtual void submit_part(int part, std::span<const RowQuery> queries) {
    (void)part;
    submit(queries);
  }
  [[nodiscard]] virtual std::span<const kernels::DecodeTask> wait_part(int part) {
    (void)part;
    return wait();
  }

 protected:
  // Throws SystemError unless there is one query per layer.
  void check_queries(std::span<const RowQuery> queries) const;

  std::vector<TableLayout> layouts_;
  std::vector<RowRange> ranges_;
};

}  // namespace pleshard
