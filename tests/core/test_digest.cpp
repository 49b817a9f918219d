// The digest that names a job's inputs and checks its output's parts: equal bytes give equal
// digests, a change of any byte, of where blocks end, or of the seed gives another.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "core/digest.hpp"

namespace {

using pleshard::Digest;

TEST(Digest, EqualBytesEqualDigests) {
  std::vector<std::uint8_t> bytes(1000);
  std::mt19937_64 random(7);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(random());
  EXPECT_EQ(Digest().add(bytes).value(), Digest().add(bytes).value());
  EXPECT_NE(Digest().add(bytes).value(), Digest(1).add(bytes).value());
}

TEST(Digest, EveryByteAndLengthCounts) {
  std::vector<std::uint8_t> bytes(257, 0);
  std::set<std::uint64_t> seen{Digest().add(bytes).value()};
  for (std::size_t i = 0; i < bytes.size(); ++i)
    for (const std::uint8_t v : {1, 128}) {
      auto changed = bytes;
      changed[i] = v;
      EXPECT_TRUE(seen.insert(Digest().add(changed).value()).second) << "byte " << i;
    }
  for (std::size_t n = 0; n < 80; ++n)  // zeros of every length, tails of every size
    EXPECT_TRUE(seen.insert(Digest().add(std::span(bytes).first(n)).value()).second) << n << " zeros";
}

TEST(Digest, BlocksAreDelimited) {
  const std::vector<std::uint8_t> ab{'a', 'b'};
  const std::vector<std::uint8_t> a{'a'};
  const std::vector<std::uint8_t> b{'b'};
  EXPECT_NE(Digest().add(ab).value(), Digest().add(a).add(b).value());
}

}  // namespace
