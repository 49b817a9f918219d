#pragma once
// The exchange of a tier of whole tables: none.

#include <array>
#include <cstdint>
#include <vector>

#include "engine/exchange.hpp"

namespace pleshard {

// For stores that hold every row (disk, or the rows of a group read in place: peer-read):
// each rank looks up the rows of its own tokens (its sequence slice under sequence
// parallelism); nothing is exchanged. Where the store fetches ahead, a step also runs in two
// halves (Exchange::begins_ahead), so the disk tier reads the next step's rows while this
// one's are decoded. Where the rows are a group's one copy, the step's hash counts the
// lookups outside my balanced part (rows read from peers: ExchangeTraffic::rows_from_peers),
// on the device where the step runs there, so that a step waits for nothing more.
class LocalExchange final : public Exchange {
 public:
  // `name`: the strategy's (peer-read), or "local" where the tier's tables are whole.
  // `one_copy`: the store's whole tables are the ETP group's one copy, my part of it my
  // balanced range of each.
  explicit LocalExchange(const ExchangeContext& context, const char* name = "local", bool one_copy = false);
  ~LocalExchange() override;
  LocalExchange(const LocalExchange&) = delete;
  LocalExchange& operator=(const LocalExchange&) = delete;
  [[nodiscard]] const char* name() const override { return name_; }
  void run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) override;
  [[nodiscard]] std::int64_t max_query_ids() const override;
  [[nodiscard]] bool begins_ahead() const override { return ctx_.store.fetches_ahead(); }
  void begin(std::int64_t tokens, StepMarks& marks) override;
  void finish(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
              const std::function<void()>& fetched) override;
  void abandon() override { finished_count_ = begun_count_; }

 protected:
  [[nodiscard]] ExchangeTraffic device_counted() const override;

 private:
  // What a step begun leaves its finish: nothing of it is read from the plan after begin(),
  // which the next step's begin() repacks.
  struct Begun {
    std::int64_t tokens = 0;
    RowRange slice;               // my tokens of the step's (my sequence slice)
    std::size_t layer_bytes = 0;  // one layer's embeddings at the step's slot size
  };
  void release_tally() noexcept;
  // The step's ids and its fetch's submit.
  void submit(std::int64_t tokens, StepMarks& marks);
  // The rest of the oldest step submitted.
  void complete(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
                const std::function<void()>& fetched);

  ExchangeContext ctx_;
  const char* name_;
  // One copy: per layer my part's bounds and the count outside it, in the space's memory;
  // the counts read back into host memory.
  kernels::IdTally tally_;
  unsigned long long* read_back_ = nullptr;
  RegionRing out_;  // [layers][slot tokens][width], per output slot
  std::array<Begun, 2> begun_;
  std::uint64_t begun_count_ = 0;     // steps begun
  std::uint64_t finished_count_ = 0;  // steps finished
};

}  // namespace pleshard
