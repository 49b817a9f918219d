#pragma once
// A contiguous range of rows (or tokens), and the balanced split of one range into parts.

#include <cstdint>

namespace pleshard {

struct RowRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  [[nodiscard]] std::int64_t size() const { return end - begin; }
};

// Part `index` of `parts` contiguous, balanced ranges of [0, rows): sizes differ by at most
// one, earlier parts taking the extra rows.
[[nodiscard]] inline RowRange balanced_range(std::int64_t rows, int parts, int index) {
  const std::int64_t base = rows / parts;
  const std::int64_t extra = rows % parts;
  const std::int64_t begin = index * base + (index < extra ? index : extra);
  return {begin, begin + base + (index < extra ? 1 : 0)};
}

}  // namespace pleshard
