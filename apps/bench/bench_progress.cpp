#include "bench/bench_progress.hpp"

#include <cstdio>
#include <utility>

#include "kernels/gpu_device.hpp"
#include "store/storage_tier.hpp"

namespace pleshard {

namespace {

// Seconds since the process's first BenchProgress: the run's, over all its parts.
double seconds_benchmarking() {
  static const auto begin = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

}  // namespace

BenchProgress::BenchProgress(std::string bench, int cases, bool speaks)
    : bench_(std::move(bench)), cases_(cases), speaks_(speaks) {
  (void)seconds_benchmarking();
}

void BenchProgress::next(const std::string& what) {
  ++started_;
  const double now = seconds_benchmarking();
  if (!speaks_ || now < k_progress_after || now - last_line_ < 1.0) return;
  last_line_ = now;
  std::fprintf(stderr, "pleshard: bench %s: case %d of %d (%s), %.0f s so far\n", bench_.c_str(), started_, cases_,
               what.c_str(), now);
  std::fflush(stderr);
}

std::string why_no_cuda() {
  if (!kernels::built_with_cuda()) return "this build has no CUDA";
  return gpu_available() ? "" : "no GPU here, though this build has CUDA";
}

}  // namespace pleshard
