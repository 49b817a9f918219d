#pragma once
// The exchange of a tier of whole tables: none.

#include <cstdint>
#include <vector>

#include "engine/exchange.hpp"

namespace pleshard {

// For stores that hold every row (disk): each rank looks up the rows of its own tokens (its
// sequence slice under sequence parallelism); nothing is exchanged.
class LocalExchange final : public Exchange {
 public:
  explicit LocalExchange(const ExchangeContext& context);
  [[nodiscard]] const char* name() const override { return "local"; }
  void run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) override;
  [[nodiscard]] std::int64_t max_query_ids() const override;

 private:
  ExchangeContext ctx_;
  RegionRing out_;  // [layers][slot tokens][width], per output slot
};

}  // namespace pleshard
