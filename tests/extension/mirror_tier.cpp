#include "extension/mirror_tier.hpp"

#include <memory>
#include <string>
#include <vector>

#include "store/host_store.hpp"
#include "store/tier_memory.hpp"

namespace mirror_tier {

namespace {

using namespace pleshard;

// Rows ranges[d] of every table, loaded by the host tier's store and copied into vectors
// this store owns; a step's lookups are staged — the rows each asks for copied into a block
// of the step's own, decoded on the host as the host tier's are. It fetches ahead: the
// blocks come in two sets, taken in turn, so that a step's rows stay while the next step's
// are staged.
class MirrorStore final : public RowStore {
 public:
  MirrorStore(const PleCheckpoint& checkpoint, std::span<const RowRange> ranges) {
    HostStore loaded(checkpoint, ranges);
    std::vector<RowQuery> none(ranges.size());
    loaded.submit(none);
    const std::span<const kernels::DecodeTask> tables = loaded.wait();
    rows_.resize(tables.size());
    scales_.resize(tables.size());
    for (std::size_t d = 0; d < tables.size(); ++d) {
      kernels::TableView view = tables[d].rows;
      const auto count = static_cast<std::size_t>(view.row_end - view.row_begin);
      if (view.rows != nullptr) rows_[d].assign(view.rows, view.row_at(count));
      if (view.block_scales != nullptr) scales_[d].assign(view.block_scales, view.scales_at(count));
      view.rows = rows_[d].data();
      view.block_scales = view.block_scales != nullptr ? scales_[d].data() : nullptr;
      views_.push_back(view);
      layouts_.push_back(loaded.layout(static_cast<int>(d)));
      ranges_.push_back(loaded.range(static_cast<int>(d)));
    }
    for (int t = 0; t < 2; ++t) {
      staged_[t].resize(views_.size());
      tasks_[t].resize(views_.size());
    }
  }

  [[nodiscard]] bool fetches_ahead() const override { return true; }
  void submit(std::span<const RowQuery> queries) override {
    check_queries(queries);
    turn_ ^= 1;  // the other set holds the last submit's rows until the next submit
    for (std::size_t d = 0; d < views_.size(); ++d) tasks_[turn_][d] = stage(views_[d], queries[d], staged_[turn_][d]);
  }
  [[nodiscard]] std::span<const kernels::DecodeTask> wait() override { return tasks_[turn_]; }

 private:
  // One layer's rows of a step, in query order.
  struct Staged {
    std::vector<std::uint8_t> rows;
    std::vector<std::uint8_t> scales;
    std::vector<std::int64_t> keys;  // into the block; -1 where the table holds no row
  };

  static kernels::DecodeTask stage(const kernels::TableView& table, const RowQuery& q, Staged& staged) {
    const std::size_t row_bytes = table.row_stride();
    const std::size_t scale_bytes =
        table.block_scales == nullptr ? 0 : static_cast<std::size_t>(table.scales_at(1) - table.scales_at(0));
    staged.rows.clear();
    staged.scales.clear();
    staged.keys.assign(static_cast<std::size_t>(q.count), -1);
    std::int64_t held = 0;
    for (std::int64_t i = 0; i < q.count; ++i) {
      if (!table.owns(q.ids[i])) continue;
      const auto local = static_cast<std::size_t>(q.ids[i] - table.row_begin);
      staged.rows.insert(staged.rows.end(), table.row_at(local), table.row_at(local) + row_bytes);
      if (scale_bytes != 0)
        staged.scales.insert(staged.scales.end(), table.scales_at(local), table.scales_at(local) + scale_bytes);
      staged.keys[static_cast<std::size_t>(i)] = held++;
    }
    kernels::TableView block = table;
    block.row_begin = 0;
    block.row_end = held;
    block.rows = staged.rows.data();
    block.block_scales = scale_bytes != 0 ? staged.scales.data() : nullptr;
    return {block, staged.keys.data(), q.count, nullptr};
  }

  std::vector<std::vector<std::uint8_t>> rows_;
  std::vector<std::vector<std::uint8_t>> scales_;
  std::vector<kernels::TableView> views_;
  std::vector<Staged> staged_[2];
  std::vector<kernels::DecodeTask> tasks_[2];
  int turn_ = 0;
};

// Registered when the program starts, or by the first tier() of another file's
// initializer, whichever comes first.
const StorageTier k_at_start = tier();

}  // namespace

pleshard::TierDescriptor descriptor() {
  TierDescriptor tier;
  tier.name = k_name;
  tier.help = "a copy of the host tier's rows";
  tier.speed_order = 35;  // after the host tier, before the disk
  tier.decodes = DecodesOn::host;
  tier.capabilities = {.loads_collectively = true};
  tier.memory = [](std::span<const TableLayout> layouts, std::span<const RowRange> ranges) {
    return std::vector<MemoryUse>{{MemoryKind::host, rows_stored_bytes(layouts, ranges)}};
  };
  tier.load_bytes = rows_stored_bytes;
  tier.memory_remedy = [] { return std::string("use more nodes"); };
  tier.make_store = [](StorageTier, const PleCheckpoint& checkpoint, std::span<const RowRange> ranges, StepSpace&,
                       const StoreOptions&) -> std::unique_ptr<RowStore> {
    return std::make_unique<MirrorStore>(checkpoint, ranges);
  };
  return tier;
}

pleshard::StorageTier tier() {
  static const pleshard::StorageTier id = pleshard::register_tier(descriptor());
  return id;
}

}  // namespace mirror_tier
