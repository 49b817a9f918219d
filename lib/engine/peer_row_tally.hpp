#pragma once
// Rows a rank reads in place from the other ranks' parts of its group's one copy (peer reads:
// ExchangeTraffic::rows_from_peers), counted by the kernels that see the lookups — the step's
// hash on one node (LocalExchange), the owner's widening of the ids asked of it between nodes
// (OwnerService) — into the space's memory, and read back between steps, so that a step waits
// for nothing more. A copy's parts are the balanced ranges of its rows over the ranks of the
// node that hold it, mine the one of my place among them.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/exchange.hpp"
#include "kernels/common/id_tally.hpp"
#include "store/row_range.hpp"

namespace pleshard {

class PeerRowTally {
 public:
  struct Layer {
    RowRange copy;              // the rows of the group's copy the lookups read (empty: none)
    RowRange mine;              // my part of them
    std::size_t row_bytes = 0;  // a row's stored bytes
  };
  // The tally of the context's store, in its space: per layer, its range as the copy where
  // group_copy says it is one, my part my balanced share of it among my group's ranks on my
  // node. Null where no layer is such a copy (nothing to count).
  [[nodiscard]] static std::unique_ptr<PeerRowTally> of(const ExchangeContext& context);

  PeerRowTally(StepSpace& space, std::span<const Layer> layers);
  ~PeerRowTally();
  PeerRowTally(const PeerRowTally&) = delete;
  PeerRowTally& operator=(const PeerRowTally&) = delete;

  // The kernels' view, counting entries [first, last) (kernels::IdTally).
  [[nodiscard]] kernels::IdTally tally(std::int64_t first, std::int64_t last) const;
  // Whether a lookup of the layer's row `id` reads another rank's part: for ids the host sees.
  [[nodiscard]] bool counts(int layer, std::int64_t id) const;
  // The rows counted in the space so far and their stored bytes (waits for the space's work).
  [[nodiscard]] ExchangeTraffic counted() const;
  // `rows` of the layer counted on the host, as traffic.
  [[nodiscard]] ExchangeTraffic rows(int layer, std::int64_t rows) const;

 private:
  void release() noexcept;

  StepSpace& space_;
  std::vector<Layer> layers_;
  std::vector<std::int64_t> bounds_;  // 4 a layer (kernels::IdTally), on the host
  std::int64_t* space_bounds_ = nullptr;
  unsigned long long* outside_ = nullptr;    // a count a layer, in the space
  unsigned long long* read_back_ = nullptr;  // host memory of the space
};

}  // namespace pleshard
