#pragma once
// A row cache in the step space's memory (GPU memory where the tier decodes on the GPU) in
// front of a slow tier's store — pinned host memory read over PCIe, or the disk — for every
// layer: a static part filled once from chosen rows (a profile's hottest) and a dynamic part
// that admits each step's misses (kernels/common/row_cache.hpp). A step probes the cache,
// asks the slow tier for the misses only, and decodes hits and misses from the cache's
// memory in the same step; what it decodes is what the slow tier holds, bit for bit. Where
// the slow tier fetches ahead, so does the cache: wait() copies the slow tier's rows into the
// cache's memory, and the decode reads only that and the step's keys, which alternate
// between two sets. The next step's probe may then run before this step's decode: it only
// stamps ways and notes misses, and the fill that overwrites a way this step reads runs in
// the next wait(), after this step's decode in the space's order.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "exec/step_space.hpp"
#include "kernels/common/row_cache.hpp"
#include "store/row_store.hpp"

namespace pleshard {

// One layer's cache.
struct LayerCache {
  std::int64_t rows = 0;          // slots, static and dynamic
  std::vector<std::int64_t> hot;  // the static part: ascending distinct ids inside the store's range
};

// Lookups inside a layer's rows, every step so far: found in the cache, read from the slow
// tier (each missed row once per step), and repeating a miss of their step.
struct CacheCounts {
  std::int64_t hits = 0;
  std::int64_t misses = 0;
  std::int64_t repeats = 0;
};

// Slots of each layer's cache for a cache of `rows` rows or `bytes` bytes (one of them
// non-zero) over the layers, shared in proportion to the rows each layer's range holds;
// rows of a layer are stored packed (kernels::packed_row_bytes); at most the rows the range holds.
[[nodiscard]] std::vector<std::int64_t> cache_rows_per_layer(std::int64_t rows, double bytes,
                                                             std::span<const TableLayout> layouts,
                                                             std::span<const RowRange> ranges);

class CachedStore final : public RowStore {
 public:
  // `layers[d]` for every layer of `backing`; its hot ids at most its rows.
  CachedStore(std::unique_ptr<RowStore> backing, StepSpace& space, std::vector<LayerCache> layers);

  [[nodiscard]] HostReadCounts host_reads() const override { return backing_->host_reads(); }
  [[nodiscard]] bool fetches_ahead() const override { return backing_->fetches_ahead(); }
  // Where the slow tier fetches ahead at that size. (Beginning ahead would be safe at every
  // size, as wait() has read every row the slow tier handed out, but nothing would be
  // fetched beside the decode where the slow tier's rows are read in place by the fill.)
  [[nodiscard]] bool fetches_ahead_at(std::int64_t count) const override { return backing_->fetches_ahead_at(count); }
  void set_fetching_ahead(bool on) override;
  // Allocates the caches and their staging for steps of up to `max_ids` ids, and fills the
  // static parts through the slow tier, `max_ids` rows at a time.
  void reserve(std::int64_t max_ids) override;
  // The backing store's, and the second set of keys where steps begin ahead; the caches'
  // own are bytes().
  [[nodiscard]] std::uint64_t step_buffer_bytes(std::int64_t max_ids) const override;
  [[nodiscard]] std::uint64_t step_host_bytes(std::int64_t max_ids) const override {
    return backing_->step_host_bytes(max_ids);
  }
  [[nodiscard]] std::span<const std::uint8_t> host_rows(int layer) const override { return backing_->host_rows(layer); }
  void submit(std::span<const RowQuery> queries) override;
  [[nodiscard]] std::span<const kernels::DecodeTask> wait() override;
  void abandon() override { backing_->abandon(); }

  // Waits for the space's work.
  [[nodiscard]] CacheCounts counts(int layer) const;
  [[nodiscard]] std::int64_t static_rows(int layer) const;
  [[nodiscard]] std::int64_t dynamic_rows(int layer) const;
  // Bytes the caches and their staging take once reserved for steps of `max_ids` ids.
  [[nodiscard]] std::uint64_t bytes(std::int64_t max_ids) const;

 private:
  struct Layer {
    explicit Layer(StepSpace& space)
        : hot(space),
          tags(space),
          stamps(space),
          slots(space),
          keys{SpaceBuffer(space), SpaceBuffer(space)},
          misses(space),
          step_keys(space),
          step_owners(space),
          counters(space) {}
    LayerCache plan;
    std::int64_t sets = 0;
    std::int64_t step_entries = 0;
    SpaceBuffer hot, tags, stamps, slots;
    SpaceBuffer keys[2];  // each lookup's slot: one set a step, two in turn fetching ahead
    SpaceBuffer misses, step_keys, step_owners, counters;
  };

  [[nodiscard]] kernels::CacheView view(std::size_t d) const;
  void fill_static(std::int64_t max_ids);

  std::unique_ptr<RowStore> backing_;
  StepSpace& space_;
  std::vector<Layer> layers_;
  std::int64_t max_ids_ = 0;
  bool ahead_ = false;  // two sets of keys, taken in turn by the submits
  int turn_ = 0;
  std::vector<kernels::CacheTask> tasks_;
  std::vector<RowQuery> missed_;
  std::vector<kernels::DecodeTask> out_;
};

}  // namespace pleshard
