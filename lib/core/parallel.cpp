#include "core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <list>
#include <mutex>
#include <thread>

namespace pleshard {

namespace {

std::atomic<std::size_t> g_host_threads{0};

// Threads kept for the process's parallel loops, so that a loop — a step's host kernels, a
// round of reads — starts none. The caller works on its own loop beside the helpers that
// join it, and waits only for those that did join: a loop started inside another's body
// (a nested one) always finishes, on its caller alone if no thread is idle.
class HelperPool {
 public:
  // Never destroyed, its threads never joined: a process that exits while one is blocked
  // in a loop's body (a read of a stalled file) must not wait for it.
  static HelperPool& instance() {
    static HelperPool* pool = new HelperPool;
    return *pool;
  }

  [[nodiscard]] std::size_t threads() {
    const std::lock_guard lock(lock_);
    return threads_;
  }

  void run(std::size_t count, std::size_t helpers, const std::function<void(std::size_t)>& body) {
    Loop loop{&body, count};
    {
      const std::lock_guard lock(lock_);
      loop.wanted = helpers;
      wanted_ += helpers;
      loops_.push_back(&loop);
      // An idle thread for every helper the running loops still want: as many as were ever
      // wanted at once, kept for the next loops.
      for (; idle_ < wanted_; ++idle_, ++threads_) std::thread([this] { help(); }).detach();
    }
    work_.notify_all();
    work_on(loop);
    std::unique_lock lock(lock_);
    wanted_ -= loop.wanted;
    loop.wanted = 0;  // none joins once its caller has run out of work
    done_.wait(lock, [&] { return loop.running == 0; });
    loops_.remove(&loop);
    if (loop.failure) std::rethrow_exception(loop.failure);
  }

 private:
  struct Loop {
    const std::function<void(std::size_t)>* body;
    std::size_t count;
    std::atomic<std::size_t> next{0};
    std::size_t wanted = 0;   // helpers it still takes (under lock_)
    std::size_t running = 0;  // helpers working on it (under lock_)
    std::exception_ptr failure{};
    std::mutex failure_lock{};
  };

  // Indexes taken in order until none is left; the first failure ends the loop.
  static void work_on(Loop& loop) {
    try {
      for (std::size_t i = loop.next++; i < loop.count; i = loop.next++) (*loop.body)(i);
    } catch (...) {
      const std::lock_guard lock(loop.failure_lock);
      if (!loop.failure) loop.failure = std::current_exception();
      loop.next = loop.count;
    }
  }

  void help() {
    std::unique_lock lock(lock_);
    for (;;) {
      Loop* loop = nullptr;
      work_.wait(lock, [&] {
        const auto it = std::find_if(loops_.begin(), loops_.end(), [](const Loop* l) { return l->wanted > 0; });
        loop = it == loops_.end() ? nullptr : *it;
        return loop != nullptr;
      });
      --loop->wanted;
      --wanted_;
      --idle_;
      ++loop->running;
      lock.unlock();
      work_on(*loop);
      lock.lock();
      ++idle_;
      if (--loop->running == 0) done_.notify_all();
    }
  }

  std::mutex lock_;
  std::condition_variable work_;  // a loop wants helpers
  std::condition_variable done_;  // a loop's last helper left it
  std::list<Loop*> loops_;        // running, oldest first
  std::size_t wanted_ = 0;        // helpers the running loops still want
  std::size_t idle_ = 0;          // threads on no loop, those starting among them
  std::size_t threads_ = 0;       // started, each kept for the process's life
};

}  // namespace

void set_host_threads(std::size_t threads) { g_host_threads = threads; }

std::size_t host_threads() {
  const std::size_t n = g_host_threads;
  return n == 0 ? host_cores() : n;
}

void parallel_for(std::size_t count, std::size_t max_threads, std::size_t min_per_thread,
                  const std::function<void(std::size_t)>& body) {
  const std::size_t threads = std::min(max_threads, count / std::max<std::size_t>(1, min_per_thread));
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) body(i);
    return;
  }
  HelperPool::instance().run(count, threads - 1, body);
}

std::size_t helper_threads() { return HelperPool::instance().threads(); }

}  // namespace pleshard
