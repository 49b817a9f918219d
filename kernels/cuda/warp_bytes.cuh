#pragma once
// A warp's copy of a few hundred bytes (a packed row: pack_stored_row's Bytes): one or two
// spans moved in the widest words, up to 16 bytes, that all their addresses and lengths
// allow, each lane holding up to k_batch words of either span in flight before it stores
// any. Over PCIe (rows in pinned host memory) a row's codes and scales then cost one round
// trip together, where runs of bytes cost one per 32 bytes, each waiting for the store
// before it.

#include <cstddef>
#include <cstdint>

#include "kernels/common/row_pack.hpp"

namespace pleshard::kernels {

struct WarpBytes {
  int lane = 0;  // this thread's lane; all 32 lanes of the warp call together

  __device__ void operator()(ByteSpan a, ByteSpan b = {}) const {
    const std::uintptr_t bits = address_bits(a) | address_bits(b);
    if (bits % 16 == 0) {
      words<uint4>(a, b);
    } else if (bits % 8 == 0) {
      words<std::uint64_t>(a, b);
    } else if (bits % 4 == 0) {
      words<std::uint32_t>(a, b);
    } else if (bits % 2 == 0) {
      words<std::uint16_t>(a, b);
    } else {
      words<std::uint8_t>(a, b);
    }
  }

 private:
  static constexpr int k_batch = 4;

  __device__ static std::uintptr_t address_bits(const ByteSpan& s) {
    return s.n == 0 ? 0 : reinterpret_cast<std::uintptr_t>(s.dst) | reinterpret_cast<std::uintptr_t>(s.src) | s.n;
  }

  // Word w of the two spans one after the other: its destination and source (null: zero).
  template <typename W>
  __device__ static void word_at(const ByteSpan& a, const ByteSpan& b, std::size_t w, W*& dst, const W*& src) {
    const std::size_t in_a = a.n / sizeof(W);
    const ByteSpan& s = w < in_a ? a : b;
    const std::size_t k = w < in_a ? w : w - in_a;
    dst = reinterpret_cast<W*>(s.dst) + k;
    src = s.src != nullptr ? reinterpret_cast<const W*>(s.src) + k : nullptr;
  }

  template <typename W>
  __device__ void words(const ByteSpan& a, const ByteSpan& b) const {
    const std::size_t count = a.n / sizeof(W) + b.n / sizeof(W);
    for (std::size_t base = 0; base < count; base += 32 * k_batch) {
      W held[k_batch];
      W* to[k_batch] = {};
#pragma unroll
      for (int k = 0; k < k_batch; ++k) {
        const std::size_t w = base + static_cast<std::size_t>(k * 32 + lane);
        if (w >= count) break;
        const W* from = nullptr;
        word_at(a, b, w, to[k], from);
        held[k] = from != nullptr ? *from : W{};
      }
#pragma unroll
      for (int k = 0; k < k_batch; ++k)
        if (to[k] != nullptr) *to[k] = held[k];
    }
  }
};

}  // namespace pleshard::kernels
