#include "core/worker.hpp"

#include <utility>

#include "core/error.hpp"

namespace pleshard {

Worker::Worker() : thread_([this](const std::stop_token& stop) { serve(stop); }) {}

Worker::~Worker() {
  try {
    finish();
  } catch (...) {  // a destructor cannot report it; the next owner never sees this job
  }
  thread_.request_stop();
}

void Worker::start(std::function<void()> job) {
  if (!job) throw SystemError("Worker: an empty job");
  {
    const std::lock_guard hold(lock_);
    if (in_flight_) throw SystemError("Worker: a job started while the last is in flight");
    job_ = std::move(job);
    in_flight_ = true;
    failure_ = nullptr;
  }
  changed_.notify_all();
}

void Worker::finish() {
  std::unique_lock hold(lock_);
  changed_.wait(hold, [this] { return !in_flight_; });
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

bool Worker::busy() const {
  const std::lock_guard hold(lock_);
  return in_flight_;
}

void Worker::serve(const std::stop_token& stop) {
  std::unique_lock hold(lock_);
  while (changed_.wait(hold, stop, [this] { return in_flight_ && job_; })) {
    std::function<void()> job = std::exchange(job_, nullptr);
    hold.unlock();
    std::exception_ptr failure;
    try {
      job();
    } catch (...) {
      failure = std::current_exception();
    }
    hold.lock();
    failure_ = failure;
    in_flight_ = false;
    changed_.notify_all();
  }
}

}  // namespace pleshard
