#include "core/progress.hpp"

#include <cstdio>

namespace pleshard {

ProgressMeter::ProgressMeter(std::string label, std::uint64_t total_bytes, bool enabled)
    : label_(std::move(label)),
      total_(total_bytes),
      enabled_(enabled),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

double ProgressMeter::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressMeter::update(std::uint64_t done_bytes) {
  done_ = done_bytes;
  const auto now = std::chrono::steady_clock::now();
  if (!enabled_ || now - last_ < std::chrono::seconds(1)) return;
  last_ = now;
  const double s = seconds();
  const double rate = static_cast<double>(done_) / s;
  std::fprintf(stderr, "%s: %.2f / %.2f GB (%.0f%%)  %.2f GB/s  ETA %.0f s\n", label_.c_str(),
               static_cast<double>(done_) * 1e-9, static_cast<double>(total_) * 1e-9,
               total_ ? 100.0 * static_cast<double>(done_) / static_cast<double>(total_) : 100.0, rate * 1e-9,
               rate > 0 ? static_cast<double>(total_ - done_) / rate : 0.0);
}

}  // namespace pleshard
