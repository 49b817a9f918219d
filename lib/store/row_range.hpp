#pragma once
// A contiguous range of rows (or tokens), the balanced split of one range into parts, and
// its cut at multiples of a number of rows, and the balanced split of such cuts.

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace pleshard {

struct RowRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  [[nodiscard]] std::int64_t size() const { return end - begin; }
  bool operator==(const RowRange&) const = default;
};

// Part `index` of `parts` contiguous, balanced ranges of [0, rows): sizes differ by at most
// one, earlier parts taking the extra rows.
[[nodiscard]] inline RowRange balanced_range(std::int64_t rows, int parts, int index) {
  const std::int64_t base = rows / parts;
  const std::int64_t extra = rows % parts;
  const std::int64_t begin = index * base + (index < extra ? index : extra);
  return {begin, begin + base + (index < extra ? 1 : 0)};
}

// `range` cut at the multiples of `rows` rows of the table (a load's bands and pieces, on
// the boundaries of a file's chunks): count() parts, part k at(k); the first and last may
// be shorter.
struct RowCuts {
  RowRange range;
  std::int64_t rows = 1;  // at least one
  [[nodiscard]] std::size_t count() const {
    if (range.size() <= 0) return 0;
    return static_cast<std::size_t>((range.end - 1) / rows - range.begin / rows + 1);
  }
  [[nodiscard]] RowRange at(std::size_t k) const {
    const std::int64_t first = (range.begin / rows + static_cast<std::int64_t>(k)) * rows;
    return {std::max(range.begin, first), std::min(range.end, first + rows)};
  }
};

// Part `index` of `parts` contiguous parts of `range` holding balanced numbers of its cuts
// at multiples of `rows` (RowCuts: a file's chunks, none split between two parts); a part
// with no cut is empty, at the range's end. The rows that one of several ranks reads of
// a range they share.
[[nodiscard]] inline RowRange balanced_cuts(RowRange range, std::int64_t rows, int parts, int index) {
  const RowCuts cuts{range, std::max<std::int64_t>(1, rows)};
  const RowRange mine = balanced_range(static_cast<std::int64_t>(cuts.count()), parts, index);
  if (mine.size() == 0) return {range.end, range.end};
  return {cuts.at(static_cast<std::size_t>(mine.begin)).begin, cuts.at(static_cast<std::size_t>(mine.end - 1)).end};
}

}  // namespace pleshard
