#pragma once
// What a benchmark is doing, for runs that take more than a few seconds: once the process
// has benchmarked for k_progress_after seconds (from its first BenchProgress), each case's
// start on stderr (rank 0 only, at most one line a second), so that a long run is seen to
// move and a stuck one where it stopped. Also why the
// CUDA cases of a benchmark cannot run here, for the line that says they were skipped.

#include <chrono>
#include <string>

namespace pleshard {

inline constexpr double k_progress_after = 2.0;  // seconds of silence first

class BenchProgress {
 public:
  // `cases`: how many next() calls the run makes; `speaks`: this process prints (rank 0).
  BenchProgress(std::string bench, int cases, bool speaks);
  // Case `what` begins.
  void next(const std::string& what);

 private:
  std::string bench_;
  int cases_ = 0;
  int started_ = 0;
  bool speaks_ = false;
  double last_line_ = -1;  // seconds since the first BenchProgress of the last line printed
};

// Empty where this build has CUDA and this machine a GPU; otherwise why not ("this build has
// no CUDA", "no GPU here, though this build has CUDA").
[[nodiscard]] std::string why_no_cuda();

}  // namespace pleshard
