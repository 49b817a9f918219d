#pragma once
// Which tables of a started step a consumer may read (PleEngine::start): the step runs on the
// engine's step thread, and each table is signalled as its embeddings' work is enqueued,
// with a mark on the space's stream after it, so that a consumer waits on the host only
// until that table is enqueued and on the GPU only for the work before its mark. A step
// whose tables are placed on several tiers, in a group of one rank, signals each tier's
// tables once they are decoded, fastest tier first (a pinned table's host gather then runs
// while the consumer reads a device table); any other step signals every table at its end.

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "engine/exchange.hpp"
#include "exec/space_event.hpp"

namespace pleshard {

class TableReadiness {
 public:
  TableReadiness(const StepSpace& space, int tables);

  // A started step: its step thread signals its tables from now on.
  void begin();
  [[nodiscard]] bool active() const { return active_; }
  // The step thread: `tables`, at `views`' places (views[d] for table d; others unread), are
  // enqueued; marks the stream after them and wakes their waiters.
  void ready(std::span<const int> tables, std::span<const EmbeddingView> views) { signal(tables, views, true); }
  // The step thread: every table not signalled yet (the step is enqueued whole).
  void ready_rest(std::span<const EmbeddingView> views);
  // The step thread: the step failed; its waiters rethrow `failure`.
  void fail(std::exception_ptr failure);
  // The consumer: blocks until `table` is signalled (rethrows the step's failure) and
  // returns its view and its mark (native(): the CUDA event after its work; null on the host).
  [[nodiscard]] std::pair<EmbeddingView, const SpaceEvent*> wait(int table);
  // The step is finished: nothing is signalled until the next begin(). Returns how many of
  // its tables were signalled by ready() before the step's end (ready_rest: the others).
  int end();

 private:
  void signal(std::span<const int> tables, std::span<const EmbeddingView> views, bool early);

  std::vector<std::unique_ptr<SpaceEvent>> marks_;
  std::vector<EmbeddingView> views_;
  std::vector<bool> ready_;
  int early_ = 0;
  bool active_ = false;
  std::exception_ptr failure_;
  std::mutex lock_;
  std::condition_variable changed_;
};

}  // namespace pleshard
