// The worker thread the disk tier reads on: one job at a time, each on the same thread, its
// failure rethrown by finish().
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "core/error.hpp"
#include "core/worker.hpp"

namespace pleshard {
namespace {

TEST(Worker, RunsEachJobOnOneThreadOfItsOwn) {
  Worker worker;
  std::thread::id first;
  std::thread::id second;
  worker.start([&] { first = std::this_thread::get_id(); });
  worker.finish();
  worker.start([&] { second = std::this_thread::get_id(); });
  worker.finish();
  EXPECT_NE(first, std::thread::id{});
  EXPECT_NE(first, std::this_thread::get_id());
  EXPECT_EQ(first, second);  // what the thread keeps (an io_uring ring) serves every job
}

TEST(Worker, StartReturnsWhileTheJobRunsAndFinishWaitsForIt) {
  Worker worker;
  std::atomic<bool> release{false};
  std::atomic<bool> done{false};
  worker.start([&] {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    done = true;
  });
  EXPECT_TRUE(worker.busy());
  EXPECT_FALSE(done);
  release = true;
  worker.finish();
  EXPECT_TRUE(done);
  EXPECT_FALSE(worker.busy());
}

TEST(Worker, FinishRethrowsTheJobsFailureOnceAndTheWorkerGoesOn) {
  Worker worker;
  worker.start([] { throw InputError("rows.bin: ends before a read's last byte"); });
  EXPECT_THROW(worker.finish(), InputError);
  EXPECT_NO_THROW(worker.finish());  // nothing in flight, nothing left to report
  int ran = 0;
  worker.start([&] { ++ran; });
  worker.finish();
  EXPECT_EQ(ran, 1);
}

TEST(Worker, RefusesASecondJobWhileOneIsInFlight) {
  Worker worker;
  std::atomic<bool> release{false};
  worker.start([&] {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  EXPECT_THROW(worker.start([] {}), SystemError);
  release = true;
  worker.finish();
}

// Gone at once after start(): the job, likely not yet picked up by the thread, still runs.
TEST(Worker, ADestructorRunsTheJobStartedJustBefore) {
  std::atomic<bool> done{false};
  {
    Worker worker;
    worker.start([&] { done = true; });
  }
  EXPECT_TRUE(done);
}

TEST(Worker, RefusesAnEmptyJob) {
  Worker worker;
  EXPECT_THROW(worker.start({}), SystemError);
  EXPECT_FALSE(worker.busy());
  EXPECT_NO_THROW(worker.finish());
}

TEST(Worker, AFailureNoFinishReportedGoesWithTheNextStart) {
  Worker worker;
  worker.start([] { throw InputError("dropped"); });
  while (worker.busy()) std::this_thread::yield();
  worker.start([] {});
  EXPECT_NO_THROW(worker.finish());
}

TEST(Worker, ADestructorDropsAFailureNotFinished) {
  Worker worker;
  worker.start([] { throw std::runtime_error("dropped"); });
  // Leaving the scope must neither throw nor terminate.
}

}  // namespace
}  // namespace pleshard
