#pragma once
// Repeat-and-take-the-median timing shared by the benchmarks.

#include <algorithm>
#include <chrono>
#include <vector>

namespace pleshard {

// Seconds of one call of `f` by the host's steady clock.
template <typename F>
double host_seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A case's wall time (untimed setup included) stops its repeats at this multiple of
// min_seconds: a fast operation behind a slow reset (restoring a buffer, dropping cached
// pages) would otherwise repeat for minutes.
inline constexpr double k_wall_seconds_factor = 4;

// Calls `once()` (which returns the seconds of one run) after one warm-up call, at least
// `min_repeats` times and until `min_seconds` have been timed (or the wall-time cap);
// returns the median.
template <typename Once>
double median_seconds(Once&& once, int min_repeats, double min_seconds, int* repeats = nullptr) {
  once();  // warm-up: first-touch, module load, caches
  std::vector<double> times;
  double spent = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const auto wall = [&t0] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  while (static_cast<int>(times.size()) < min_repeats ||
         (spent < min_seconds && wall() < k_wall_seconds_factor * min_seconds)) {
    times.push_back(once());
    spent += times.back();
  }
  if (repeats != nullptr) *repeats = static_cast<int>(times.size());
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

// Like median_seconds, for collectives: every rank must run the same number of repeats, so
// the count comes from one probe call (its timed and its wall seconds), agreed by
// `agree(seconds)` (a max over ranks).
template <typename Once, typename Agree>
double median_seconds_collective(Once&& once, Agree&& agree, int min_repeats, double min_seconds) {
  once();  // warm-up
  double timed = 0;
  const double wall = agree(host_seconds([&] { timed = once(); }));
  const double probe = agree(timed);
  double wanted = probe > 0 ? min_seconds / probe : min_repeats;
  if (wall > 0) wanted = std::min(wanted, k_wall_seconds_factor * min_seconds / wall);
  const int repeats = std::max(min_repeats, static_cast<int>(std::min(wanted, 100000.0)));
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) times.push_back(once());
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

}  // namespace pleshard
