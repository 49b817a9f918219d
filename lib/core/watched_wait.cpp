#include "core/watched_wait.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "core/collective.hpp"
#include "core/mpi_check.hpp"
#include "core/option_names.hpp"

namespace pleshard {

namespace {

constexpr double k_none = std::numeric_limits<double>::infinity();

std::atomic<double> g_stall_limit{k_none};
std::mutex g_limits_mutex;
double g_command_limit = k_none;
std::multiset<double> g_scopes;  // the limits of the scopes alive

void set_shortest_limit() {
  g_stall_limit.store(std::min(g_command_limit, g_scopes.empty() ? k_none : *g_scopes.begin()));
}

thread_local const std::string* t_context = nullptr;  // the innermost WaitContext's name

// Polls before the wait starts to yield the core: a collective of a step usually completes
// within microseconds, and ranks that share cores need theirs back when it does not.
constexpr int k_spin_polls = 2000;

}  // namespace

void set_stall_limit(double seconds) {
  const std::lock_guard lock(g_limits_mutex);
  g_command_limit = seconds;
  set_shortest_limit();
}

double stall_limit() { return g_stall_limit.load(); }

StallLimitScope::StallLimitScope(double seconds) : seconds_(seconds) {
  const std::lock_guard lock(g_limits_mutex);
  g_scopes.insert(seconds);
  set_shortest_limit();
}

StallLimitScope::~StallLimitScope() {
  const std::lock_guard lock(g_limits_mutex);
  g_scopes.erase(g_scopes.find(seconds_));
  set_shortest_limit();
}

WaitContext::WaitContext(std::string what) : what_(std::move(what)), outer_(t_context) { t_context = &what_; }

WaitContext::~WaitContext() { t_context = outer_; }

void wait_watched(MPI_Request& request, const std::string& what) {
  const double limit = stall_limit();
  const double start = MPI_Wtime();
  for (int polls = 0;; ++polls) {
    int done = 0;
    PLESHARD_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done != 0) return;
    if (polls < k_spin_polls) continue;
    if (std::isfinite(limit) && MPI_Wtime() - start > limit) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", limit);
      const std::string context = t_context != nullptr ? " (" + *t_context + ")" : std::string();
      abort_job(what + context + ": no progress in " + seconds + " s (" + option_name(Option::collective_timeout) +
                "): a peer rank stopped, stalled or failed");
    }
    std::this_thread::yield();
  }
}

}  // namespace pleshard
