// parallel_for: every index once, on at most the threads asked for (the caller among them),
// the first failure rethrown with the rest of the loop skipped, loops inside loops and loops
// from several threads at once finishing, and the threads kept from one loop to the next
// rather than started for each.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/parallel.hpp"

namespace {

using pleshard::parallel_for;

// The distinct threads that ran bodies, collected under a lock.
struct Threads {
  std::mutex lock;
  std::set<std::thread::id> seen;
  void add() {
    const std::lock_guard guard(lock);
    seen.insert(std::this_thread::get_id());
  }
};

// Until a second thread has run a body, or 10 s have passed.
void wait_for_a_second_thread(Threads& used) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until) {
    {
      const std::lock_guard guard(used.lock);
      if (used.seen.size() > 1) return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

TEST(ParallelFor, RunsEveryIndexOnceOnAtMostTheThreadsAsked) {
  for (const std::size_t count : {0, 1, 2, 7, 100, 5000})
    for (const std::size_t threads : {1, 2, 3, 8}) {
      std::vector<std::atomic<int>> runs(count);
      Threads used;
      parallel_for(count, threads, 1, [&](std::size_t i) {
        used.add();
        ++runs[i];
        // Long enough that the helpers join before the caller runs out of work; the first
        // item of the largest loop waits for one (up to 10 s), since on a loaded machine
        // the helpers may not be scheduled before the others are done.
        std::this_thread::sleep_for(std::chrono::microseconds(count > 50 ? 20 : 0));
        if (i == 0 && count == 5000 && threads > 1) wait_for_a_second_thread(used);
      });
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(runs[i], 1) << count << " items, index " << i;
      EXPECT_LE(used.seen.size(), std::max<std::size_t>(1, std::min(threads, count)));
      if (count == 5000 && threads > 1) {
        EXPECT_GT(used.seen.size(), 1u) << "no helper joined";
      }
    }
}

TEST(ParallelFor, FewItemsPerThreadRunOnTheCaller) {
  Threads used;
  parallel_for(7, 8, 4, [&](std::size_t) { used.add(); });  // 7 / 4: one thread
  ASSERT_EQ(used.seen.size(), 1u);
  EXPECT_EQ(*used.seen.begin(), std::this_thread::get_id());
}

TEST(ParallelFor, TheFirstFailureIsRethrownAndTheRestSkipped) {
  std::atomic<std::size_t> ran{0};
  // Every other item takes 10 us: the whole loop would take at least 0.25 s on 4 threads,
  // far longer than the failure takes to end it, even when its thread is descheduled.
  EXPECT_THROW(parallel_for(100000, 4, 1,
                            [&](std::size_t i) {
                              ++ran;
                              if (i == 10) throw std::runtime_error("item 10");
                              std::this_thread::sleep_for(std::chrono::microseconds(10));
                            }),
               std::runtime_error);
  EXPECT_LT(ran.load(), 100000u);
  // The pool is whole again: the next loop runs every index.
  std::atomic<std::size_t> after{0};
  parallel_for(1000, 4, 1, [&](std::size_t) { ++after; });
  EXPECT_EQ(after, 1000u);
}

TEST(ParallelFor, LoopsInsideLoopsAndFromSeveralThreadsFinish) {
  std::atomic<std::size_t> inner{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back(
        [&] { parallel_for(16, 4, 1, [&](std::size_t) { parallel_for(64, 4, 1, [&](std::size_t) { ++inner; }); }); });
  for (auto& t : callers) t.join();
  EXPECT_EQ(inner, 4u * 16 * 64);
}

TEST(ParallelFor, KeepsItsThreadsFromOneLoopToTheNext) {
  parallel_for(64, 3, 1, [](std::size_t) {});
  const std::size_t kept = pleshard::helper_threads();
  EXPECT_GE(kept, 2u);
  Threads used;
  for (int loop = 0; loop < 200; ++loop)
    parallel_for(64, 3, 1, [&](std::size_t) {
      used.add();
      std::this_thread::sleep_for(std::chrono::microseconds(5));
    });
  // Threads started for each loop would be new ones every time (up to 2 x 200 helpers).
  EXPECT_EQ(pleshard::helper_threads(), kept);
  EXPECT_LE(used.seen.size(), kept + 1);
}

}  // namespace
