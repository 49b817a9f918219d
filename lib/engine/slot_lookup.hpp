#pragma once
// The stages before the combine in the strategies that combine partial rows (gather-reduce,
// reduce-scatter: engine/slot_exchange.hpp): the ETP group's batches gathered into slots,
// one per DP rank (one all-gather of tokens for every layer: tokens are H x L times smaller
// than their ids, so every rank hashes the group's tokens itself), every layer's ids hashed,
// and the rows I own of every id fetched from the store and decoded — zeros for the rest —
// into the partial rows [layers][slots x slot tokens, padded][width].

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "engine/exchange.hpp"

namespace pleshard {

class SlotLookup {
 public:
  // Slots padded to a multiple of `pad_to` tokens (the combine's shares: TP under sequence
  // parallelism), the partial rows held `copies` times (output slots, where the step's
  // embeddings are the partial rows themselves; 1 where the combine writes them elsewhere).
  SlotLookup(const ExchangeContext& context, int pad_to, int copies);

  // The partial rows of every layer at the step's slot size, layer_bytes() apart. With
  // `decoded`, a store of several parts (RowStore::parts) is fetched and decoded part by
  // part, fastest first, and decoded(tables) told each part's tables once their decode is
  // enqueued (the step is then timed as one fetch: its parts' fetches and decodes
  // interleave).
  std::uint8_t* run(int out_slot, StepMarks& marks, ExchangeTraffic& step,
                    const std::function<void(std::span<const int>)>& decoded = {});

  // run() in two halves, for a store of one part (SlotExchange's steps begun ahead): begin()
  // gathers the slots, hashes the ids and submits the fetch; finish() waits for its rows,
  // calls `fetched` where the next step's begin() may run before this one's decode (the
  // store fetches ahead at the step's size, and the decode reads nothing of the plan), then
  // decodes. A Fetch is what finish() needs of its step once the plan is repacked.
  struct Fetch {
    std::int64_t ids = 0;  // lookups a layer
    std::int64_t slot_tokens = 0;
    std::size_t layer_bytes = 0;  // of the partial rows at the step's slot size
    bool decode_hashes = false;   // the decode hashes its own keys (from the plan)
    bool by_parts = false;        // fetched and decoded part by part (run())
    kernels::StepHash hashing;
    kernels::PinnedBlock pinned;
    std::vector<RowQuery> queries;
  };
  [[nodiscard]] Fetch begin(StepMarks& marks, ExchangeTraffic& step, bool by_parts = false);
  std::uint8_t* finish(const Fetch& fetch, int out_slot, StepMarks& marks, const std::function<void()>& fetched = {},
                       const std::function<void(std::span<const int>)>& decoded = {});
  // Whether finish() calls `fetched` for a step of slot `slot_tokens` (alike on every rank of
  // the group: the step's lookups are the group's slots').
  [[nodiscard]] bool begins_beside_decode(std::int64_t slot_tokens) const;
  // Where run(out_slot) leaves the partial rows.
  [[nodiscard]] std::uint8_t* partial(int out_slot) const { return partial_.at(ctx_.workspace, out_slot); }
  // Bytes of one layer's partial rows at the plan's slot size.
  [[nodiscard]] std::size_t layer_bytes() const;
  // The most ids per layer a step asks the store for: every slot's tokens' (RowStore::reserve).
  [[nodiscard]] std::int64_t max_query_ids() const;

 private:
  // Rows of one layer's partial rows at the plan's slot size: every slot's padded tokens.
  [[nodiscard]] std::int64_t layer_rows() const;

  ExchangeContext ctx_;
  int pad_to_ = 1;
  RegionRing partial_;
  std::unique_ptr<StepMarks> unmarked_;  // the parts' decodes, timed with the step's fetch
};

}  // namespace pleshard
