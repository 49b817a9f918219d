#pragma once
// A progress line on stderr for long reads and writes: at most one line a second,
// with bytes done, percent, rate and ETA; silent when disabled.

#include <chrono>
#include <cstdint>
#include <string>

namespace pleshard {

class ProgressMeter {
 public:
  ProgressMeter(std::string label, std::uint64_t total_bytes, bool enabled);
  void update(std::uint64_t done_bytes);
  [[nodiscard]] double seconds() const;

 private:
  std::string label_;
  std::uint64_t total_;
  bool enabled_;
  std::uint64_t done_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace pleshard
