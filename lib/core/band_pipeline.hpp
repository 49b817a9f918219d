#pragma once
// Bands of bulk work through two stages, overlapped: producing band k+1 (computing or reading
// rows, on a thread of its own) while band k is consumed (written to a file, copied to the
// GPU, page-locked) on the calling thread. With buffers, two used in turn: memory stays two
// bands.

#include <algorithm>
#include <array>
#include <cstddef>
#include <future>

namespace pleshard {

// Bytes of one band of bulk row work (made, read, written or copied): large enough for full
// disk and bus speed, small enough that two in flight stay well inside the memory bounds.
inline constexpr std::size_t k_band_bytes = std::size_t{64} << 20;

// Items (rows, granules) of `item_bytes` each in one band of `band_bytes` (0: k_band_bytes);
// at least one.
[[nodiscard]] constexpr std::size_t items_per_band(std::size_t item_bytes, std::size_t band_bytes = 0) {
  return std::max<std::size_t>(1, (band_bytes != 0 ? band_bytes : k_band_bytes) / std::max<std::size_t>(1, item_bytes));
}

// produce(k) then consume(k) for k in [0, count), produce(k + 1) beside consume(k). The first
// exception of either stage stops both (after the band in flight) and is rethrown.
template <typename Produce, typename Consume>
void overlap_bands(std::size_t count, const Produce& produce, const Consume& consume) {
  if (count == 0) return;
  const auto start = [&produce](std::size_t k) {
    return std::async(std::launch::async, [&produce, k] { produce(k); });
  };
  std::future<void> next = start(0);
  for (std::size_t k = 0; k < count; ++k) {
    next.get();
    if (k + 1 < count) next = start(k + 1);
    try {
      consume(k);
    } catch (...) {
      if (next.valid()) next.wait();
      throw;
    }
  }
}

// The same with two buffers used in turn: produce(k, buffer) then consume(k, buffer),
// buffer = buffers[k % 2].
template <typename Buffer, typename Produce, typename Consume>
void overlap_bands(std::size_t count, std::array<Buffer, 2>& buffers, const Produce& produce, const Consume& consume) {
  overlap_bands(
      count, [&](std::size_t k) { produce(k, buffers[k % 2]); }, [&](std::size_t k) { consume(k, buffers[k % 2]); });
}

}  // namespace pleshard
