#pragma once
// A 64-bit digest of bytes for identities and integrity checks (a job's inputs, the rows of
// a completed output part): not cryptographic, fast enough to run over every output row.
// Four independent lanes keep the multiplier busy; the result is mixed once at the end. It is
// the digest of the sequence of add() calls (each call ends a block), not of their bytes joined.

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "kernels/common/ngram_hash.hpp"

namespace pleshard {

class Digest {
 public:
  explicit Digest(std::uint64_t seed = 0) {
    for (int i = 0; i < 4; ++i) lane_[i] = kernels::splitmix64(seed + static_cast<std::uint64_t>(i));
  }

  Digest& add(std::span<const std::uint8_t> bytes) {
    const std::uint8_t* p = bytes.data();
    std::size_t n = bytes.size();
    length_ += n;
    for (; n >= 32; n -= 32, p += 32)
      for (int i = 0; i < 4; ++i) lane_[i] = round(lane_[i], load(p + 8 * i));
    std::uint64_t tail[4] = {};
    std::memcpy(tail, p, n);
    for (int i = 0; i < 4; ++i) lane_[i] = round(lane_[i], tail[i]);
    return *this;
  }
  Digest& add(std::uint64_t value) { return add({reinterpret_cast<const std::uint8_t*>(&value), sizeof value}); }
  Digest& add(std::string_view text) { return add({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()}); }
  Digest& add(std::span<const std::int64_t> values) {
    return add({reinterpret_cast<const std::uint8_t*>(values.data()), values.size_bytes()});
  }

  [[nodiscard]] std::uint64_t value() const {
    std::uint64_t h = kernels::splitmix64(length_);
    for (const std::uint64_t lane : lane_) h = kernels::splitmix64(h ^ lane);
    return h;
  }

 private:
  static std::uint64_t load(const std::uint8_t* p) {
    std::uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static std::uint64_t round(std::uint64_t lane, std::uint64_t word) {
    lane ^= word * 0x9FB21C651E98DF25ull;
    lane = (lane << 31) | (lane >> 33);
    return lane * 0xC2B2AE3D27D4EB4Full;
  }

  std::uint64_t lane_[4];
  std::uint64_t length_ = 0;
};

}  // namespace pleshard
