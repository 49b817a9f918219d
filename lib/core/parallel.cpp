#include "core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <vector>

namespace pleshard {

namespace {
std::atomic<std::size_t> g_host_threads{0};
std::atomic<std::size_t> g_kernel_threads{1};
}  // namespace

void set_kernel_threads(std::size_t threads) { g_kernel_threads = std::max<std::size_t>(1, threads); }

std::size_t kernel_threads() { return g_kernel_threads; }

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
  std::atomic<std::size_t> next{0};
  std::mutex failure_lock;
  std::exception_ptr failure;
  {
    std::vector<std::jthread> pool;
    for (std::size_t t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        try {
          for (std::size_t i = next++; i < count; i = next++) body(i);
        } catch (...) {
          const std::lock_guard lock(failure_lock);
          if (!failure) failure = std::current_exception();
          next = count;
        }
      });
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace pleshard
