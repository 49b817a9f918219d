#pragma once
// Repeat-and-take-the-median timing shared by the benchmarks.

#include <algorithm>
#include <chrono>
#include <vector>

namespace pleshard {

// Calls `once()` (which returns the seconds of one run) after one warm-up call, at least
// `min_repeats` times and until `min_seconds` have been spent; returns the median.
template <typename Once>
double median_seconds(Once&& once, int min_repeats, double min_seconds, int* repeats = nullptr) {
  once();  // warm-up: first-touch, module load, caches
  std::vector<double> times;
  double spent = 0;
  while (static_cast<int>(times.size()) < min_repeats || spent < min_seconds) {
    times.push_back(once());
    spent += times.back();
  }
  if (repeats != nullptr) *repeats = static_cast<int>(times.size());
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

// Like median_seconds, for collectives: every rank must run the same number of repeats, so
// the count comes from one timed call, agreed by `agree(seconds)` (a max over ranks).
template <typename Once, typename Agree>
double median_seconds_collective(Once&& once, Agree&& agree, int min_repeats, double min_seconds) {
  once();  // warm-up
  const double probe = agree(once());
  const double wanted = probe > 0 ? min_seconds / probe : min_repeats;
  const int repeats = std::max(min_repeats, static_cast<int>(std::min(wanted, 100000.0)));
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) times.push_back(once());
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

// Seconds of one call of `f` by the host's steady clock.
template <typename F>
double host_seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace pleshard
