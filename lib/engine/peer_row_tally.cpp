#include "engine/peer_row_tally.hpp"

#include <algorithm>

#include "engine/detail/exchange_steps.hpp"

namespace pleshard {

std::unique_ptr<PeerRowTally> PeerRowTally::of(const ExchangeContext& context) {
  // My group's ranks on my node are consecutive ETP ranks, my place among them my ETP rank's
  // remainder (the node layout the engine checked).
  const int node_ranks = std::max(1, context.node_ranks);
  const int place = context.topology.etp_rank() % node_ranks;
  std::vector<Layer> layers(detail::layers_of(context));
  for (std::size_t d = 0; d < layers.size(); ++d) {
    const auto layer = static_cast<int>(d);
    Layer& l = layers[d];
    l.row_bytes = context.store.layout(layer).bytes_per_row();
    if (d >= context.group_copy.size() || !context.group_copy[d]) continue;
    l.copy = context.store.range(layer);
    const RowRange part = balanced_range(l.copy.size(), node_ranks, place);
    l.mine = {l.copy.begin + part.begin, l.copy.begin + part.end};
  }
  const bool copies = std::any_of(layers.begin(), layers.end(), [](const Layer& l) { return l.copy.size() > 0; });
  return copies ? std::make_unique<PeerRowTally>(context.space, layers) : nullptr;
}

PeerRowTally::PeerRowTally(StepSpace& space, std::span<const Layer> layers)
    : space_(space), layers_(layers.begin(), layers.end()) {
  for (const Layer& l : layers_) bounds_.insert(bounds_.end(), {l.copy.begin, l.copy.end, l.mine.begin, l.mine.end});
  const std::size_t bound_bytes = bounds_.size() * sizeof(std::int64_t);
  const std::size_t count_bytes = std::max<std::size_t>(1, layers_.size()) * sizeof(unsigned long long);
  auto* at = static_cast<std::uint8_t*>(space_.allocate(bound_bytes + count_bytes));
  space_bounds_ = reinterpret_cast<std::int64_t*>(at);
  outside_ = reinterpret_cast<unsigned long long*>(at + bound_bytes);
  try {
    read_back_ = static_cast<unsigned long long*>(space_.allocate_host(count_bytes));
    space_.copy_from_host(space_bounds_, bounds_.data(), bound_bytes);
    space_.fill_zero(outside_, count_bytes);
    space_.synchronize();
  } catch (...) {
    release();
    throw;
  }
}

PeerRowTally::~PeerRowTally() { release(); }

void PeerRowTally::release() noexcept {
  if (space_bounds_ == nullptr) return;
  try {
    space_.synchronize();  // no step still counts into it
  } catch (...) {          // a failed job frees what it can
  }
  space_.deallocate(space_bounds_);
  if (read_back_ != nullptr) space_.deallocate_host(read_back_);
  space_bounds_ = nullptr;
  outside_ = read_back_ = nullptr;
}

kernels::IdTally PeerRowTally::tally(std::int64_t first, std::int64_t last) const {
  return {space_bounds_, outside_, first, last};
}

bool PeerRowTally::counts(int layer, std::int64_t id) const {
  return kernels::IdTally{bounds_.data(), nullptr, 0, 1}.counts(layer, 0, id);
}

ExchangeTraffic PeerRowTally::rows(int layer, std::int64_t rows) const {
  ExchangeTraffic t;
  t.rows_from_peers = rows;
  t.bytes_from_peers =
      static_cast<double>(rows) * static_cast<double>(layers_[static_cast<std::size_t>(layer)].row_bytes);
  return t;
}

ExchangeTraffic PeerRowTally::counted() const {
  ExchangeTraffic counted;
  space_.copy_to_host_async(read_back_, outside_, layers_.size() * sizeof(unsigned long long));
  space_.synchronize();
  for (std::size_t d = 0; d < layers_.size(); ++d)
    counted += rows(static_cast<int>(d), static_cast<std::int64_t>(read_back_[d]));
  return counted;
}

}  // namespace pleshard
