#pragma once
// The exchange of a tier of whole tables: none.

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/begun_steps.hpp"
#include "engine/exchange.hpp"
#include "engine/peer_row_tally.hpp"

namespace pleshard {

// For stores that hold every row (disk, or the rows of a group read in place: peer-read):
// each rank looks up the rows of its own tokens (its sequence slice under sequence
// parallelism); nothing is exchanged. Where the store fetches ahead, a step also runs in two
// halves (Exchange::begins_ahead), so the disk tier (or the pinned tier, read in place by a
// group: each rank gathers its own tokens' rows) fetches the next step's rows while this
// one's are decoded. Where the
// rows are a group's one copy (ExchangeContext::group_copy), the step's hash counts the
// lookups outside my part (engine/peer_row_tally.hpp).
class LocalExchange final : public HalvedExchange {
 public:
  // `name`: the strategy's (peer-read), or "local" where the tier's tables are whole.
  explicit LocalExchange(const ExchangeContext& context, const char* name = "local");
  [[nodiscard]] const char* name() const override { return name_; }
  [[nodiscard]] std::int64_t max_query_ids() const override;
  // Where the store fetches ahead. A step here runs no collective, nor does the engine agree
  // on its size (one slot: EngineSession::local), so the ranks of a group that reads one copy
  // need not begin the same steps ahead.
  [[nodiscard]] bool begins_ahead() const override { return ctx_.store.fetches_ahead(); }
  // At every slot size: each step decides in finish() by its own lookups (a step here runs no
  // collective for the next one's begin() to cross), and calls no `fetched` where the store
  // does not fetch ahead at its size or its decode hashes (it reads my block, which the next
  // begin() repacks).
  [[nodiscard]] bool begins_beside_decode(std::int64_t /*slot_tokens*/) const override { return begins_ahead(); }
  void abandon() override { begun_.clear(); }

 protected:
  [[nodiscard]] ExchangeTraffic device_counted() const override;
  // The step's ids and its fetch's submit.
  void submit(std::int64_t tokens, StepMarks& marks) override;
  // The rest of the oldest step submitted.
  void complete(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
                const std::function<void()>& fetched) override;

 private:
  // What a step begun leaves its finish. A decode that hashes reads my block and the hash
  // parameters where the plan holds them, so such a step begins no next one before its
  // decode (the next begin() repacks the plan); otherwise nothing of it is read from the
  // plan after begin().
  struct Begun {
    std::int64_t tokens = 0;
    RowRange slice;               // my tokens of the step's (my sequence slice)
    std::size_t layer_bytes = 0;  // one layer's embeddings at the step's slot size
    bool decode_hashes = false;   // the decode hashes its own keys (from the plan's hashing)
    kernels::StepHash hashing;
    kernels::PinnedBlock pinned;  // my block where it is still only in pinned memory
  };
  // Whether a step's decode of my tokens `slice` of a slot hashes its own keys: I look up
  // every token of the slot, and the GPU's decode can (decode_hashes).
  [[nodiscard]] bool decodes_hashing(RowRange slice, std::int64_t slot_tokens) const;
  ExchangeContext ctx_;
  const char* name_;
  std::unique_ptr<PeerRowTally> peer_rows_;  // one copy: the lookups outside my part
  RegionRing out_;                           // [layers][slot tokens][width], per output slot
  BegunSteps<Begun> begun_{"local"};
};

}  // namespace pleshard
