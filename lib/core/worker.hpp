#pragma once
// A thread of its own for one job at a time: start() hands it a job and returns, finish()
// waits for the job and rethrows what it threw. The thread lives as long as the worker, and
// with it what it keeps per thread (the disk tier's io_uring ring and registered blocks),
// so a job per step costs no thread or ring set-up.

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace pleshard {

class Worker {
 public:
  Worker();
  ~Worker();  // waits for a job in flight (its failure is dropped)
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // SystemError for an empty job, or while a job is in flight (finish() it first); a
  // failure of the last job that no finish() has reported is dropped.
  void start(std::function<void()> job);
  // Returns at once when no job was started since the last finish().
  void finish();
  [[nodiscard]] bool busy() const;

 private:
  void serve(const std::stop_token& stop);

  mutable std::mutex lock_;
  std::condition_variable_any changed_;
  std::function<void()> job_;
  bool in_flight_ = false;
  std::exception_ptr failure_;
  std::jthread thread_;  // last: started once the members above exist, stopped first
};

}  // namespace pleshard
