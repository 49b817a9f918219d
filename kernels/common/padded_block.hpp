#pragma once
// A block of 8-byte words laid out as consecutive runs, each `used` words of data and then
// padding of one value: what a copy of the block must read, and what it can write without
// reading. A step's packed batch is mostly padding (its slot has room for as many requests
// as tokens), so the GPU's pull of it reads the data over PCIe and writes the padding
// itself (kernels/cuda/pinned_pull.hpp).

#include <cstdint>

#include "kernels/common/host_device.hpp"

namespace pleshard::kernels {

inline constexpr int k_max_padded_runs = 3;

struct PaddedBlock {
  int runs = 0;
  std::int64_t words[k_max_padded_runs] = {};  // each run's length
  std::int64_t used[k_max_padded_runs] = {};   // its data, from the run's start
  std::int64_t fill[k_max_padded_runs] = {};   // the value of the rest

  // A block that is data throughout.
  [[nodiscard]] PLESHARD_HD static constexpr PaddedBlock dense(std::int64_t words) {
    PaddedBlock b;
    b.runs = 1;
    b.words[0] = words;
    b.used[0] = words;
    return b;
  }

  [[nodiscard]] PLESHARD_HD constexpr std::int64_t total_words() const {
    std::int64_t total = 0;
    for (int r = 0; r < runs; ++r) total += words[r];
    return total;
  }
  // Word i of the block (0 <= i < total_words()) whose data lies in `data` at the block's
  // offsets: its data, or its run's padding, which is never read.
  [[nodiscard]] PLESHARD_HD constexpr std::uint64_t word(const std::uint64_t* data, std::int64_t i) const {
    std::int64_t start = 0;
    for (int r = 0; r < runs; ++r) {
      if (i - start < words[r]) return i - start < used[r] ? data[i] : static_cast<std::uint64_t>(fill[r]);
      start += words[r];
    }
    return 0;
  }
  // Whether the runs are well formed (at most k_max_padded_runs, data within each).
  [[nodiscard]] PLESHARD_HD constexpr bool valid() const {
    if (runs < 1 || runs > k_max_padded_runs) return false;
    for (int r = 0; r < runs; ++r)
      if (words[r] < 0 || used[r] < 0 || used[r] > words[r]) return false;
    return true;
  }
};

// A slot's block still in pinned host memory (in 8-byte words, as the GPU's pull reads them),
// for the launch that reads it to carry, read or copy itself (hash_and_decode_step); empty
// (no words) where the block is in the step space. Its padding is written there too
// (pack_slot): a copy may skip it, but a CUDA graph's launch reads the whole block in place,
// since the runs of a replay's batch are not those of the captured one. A copy that launch
// makes is its own: the block's owner (the step plan) does not learn of it, and copies again
// if asked.
struct PinnedBlock {
  const std::int64_t* words = nullptr;
  PaddedBlock layout;
};

}  // namespace pleshard::kernels
