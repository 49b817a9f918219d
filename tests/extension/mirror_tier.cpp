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
// this store owns; a step's lookups read them in place, decoded on the host as the host
// tier's are.
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
    tasks_.resize(views_.size());
  }

  [[nodiscard]] bool reads_in_place(std::int64_t /*count*/) const override { return true; }
  void submit(std::span<const RowQuery> queries) override {
    check_queries(queries);
    for (std::size_t d = 0; d < views_.size(); ++d) tasks_[d] = {views_[d], queries[d].ids, queries[d].count};
  }
  [[nodiscard]] std::span<const kernels::DecodeTask> wait() override { return tasks_; }

 private:
  std::vector<std::vector<std::uint8_t>> rows_;
  std::vector<std::vector<std::uint8_t>> scales_;
  std::vector<kernels::TableView> views_;
  std::vector<kernels::DecodeTask> tasks_;
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
