#include "extension/toy_exchange.hpp"

#include <atomic>
#include <memory>

#include "engine/gather_reduce_exchange.hpp"

namespace toy_exchange {

namespace {

using namespace pleshard;

std::atomic<int> g_steps{0};

class ToyExchange final : public Exchange {
 public:
  explicit ToyExchange(const ExchangeContext& c)
      : inner_(std::make_unique<SlotExchange>(c, std::make_unique<AllReduceCombine>(c), k_name)) {}
  [[nodiscard]] const char* name() const override { return k_name; }
  void run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) override {
    ++g_steps;
    inner_->run(tokens, out_slot, marks, views);
    traffic_ = inner_->traffic();
  }
  [[nodiscard]] std::int64_t max_query_ids() const override { return inner_->max_query_ids(); }

 private:
  std::unique_ptr<Exchange> inner_;
};

ExchangeStrategy registered() {
  return register_exchange_strategy([] {
    StrategyDescriptor d;
    d.name = k_name;
    d.help = "a test's own gather-reduce";
    d.groups = slot_groups;
    d.make = [](const ExchangeContext& c) { return std::make_unique<ToyExchange>(c); };
    return d;
  }());
}

// Registered when the program starts, or by the first strategy() of another file's
// initializer, whichever comes first.
const ExchangeStrategy k_at_start = strategy();

}  // namespace

pleshard::ExchangeStrategy strategy() {
  static const pleshard::ExchangeStrategy id = registered();
  return id;
}
int steps() { return g_steps.load(); }
void reset_steps() { g_steps = 0; }

}  // namespace toy_exchange
