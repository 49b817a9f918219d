#include "engine/table_readiness.hpp"

#include <string>

#include "core/error.hpp"

namespace pleshard {

TableReadiness::TableReadiness(const StepSpace& space, int tables)
    : views_(static_cast<std::size_t>(tables)), ready_(static_cast<std::size_t>(tables), false) {
  for (int d = 0; d < tables; ++d) marks_.push_back(std::make_unique<SpaceEvent>(space));
}

void TableReadiness::begin() {
  const std::lock_guard lock(lock_);
  ready_.assign(ready_.size(), false);
  early_ = 0;
  failure_ = nullptr;
  active_ = true;
}

void TableReadiness::signal(std::span<const int> tables, std::span<const EmbeddingView> views, bool early) {
  {
    const std::lock_guard lock(lock_);
    if (early) early_ += static_cast<int>(tables.size());
    for (const int d : tables) {
      const auto t = static_cast<std::size_t>(d);
      marks_.at(t)->record();
      views_[t] = views[t];
      ready_[t] = true;
    }
  }
  changed_.notify_all();
}

void TableReadiness::ready_rest(std::span<const EmbeddingView> views) {
  std::vector<int> rest;
  {
    const std::lock_guard lock(lock_);
    for (std::size_t d = 0; d < ready_.size(); ++d)
      if (!ready_[d]) rest.push_back(static_cast<int>(d));
  }
  signal(rest, views, false);
}

void TableReadiness::fail(std::exception_ptr failure) {
  {
    const std::lock_guard lock(lock_);
    failure_ = std::move(failure);
  }
  changed_.notify_all();
}

std::pair<EmbeddingView, const SpaceEvent*> TableReadiness::wait(int table) {
  if (table < 0 || static_cast<std::size_t>(table) >= ready_.size())
    throw InputError("table " + std::to_string(table) + ": the engine has tables 0 to " +
                     std::to_string(ready_.size() - 1));
  const auto t = static_cast<std::size_t>(table);
  std::unique_lock lock(lock_);
  if (!active_) throw SystemError("wait for table " + std::to_string(table) + ": no step is started");
  // The step thread's own waits are watched (collectives, the GPU): it signals or fails.
  changed_.wait(lock, [&] { return ready_[t] || failure_ != nullptr; });
  if (!ready_[t]) std::rethrow_exception(failure_);
  return {views_[t], marks_[t].get()};
}

int TableReadiness::end() {
  const std::lock_guard lock(lock_);
  active_ = false;
  return early_;
}

}  // namespace pleshard
