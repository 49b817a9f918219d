#pragma once
// SHA-256 (FIPS 180-4), for digests a user can check with `sha256sum`: the request file an
// output names. Not for the hot paths (core/digest.hpp is the fast one).

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace pleshard {

class Sha256 {
 public:
  Sha256();
  Sha256& add(std::span<const std::uint8_t> bytes);
  // The digest of everything added, as 64 lowercase hex digits; the object is spent.
  [[nodiscard]] std::string hex();

 private:
  void block(const std::uint8_t* p);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> pending_{};
  std::size_t pending_bytes_ = 0;
  std::uint64_t length_ = 0;
};

// The SHA-256 of a file's bytes; InputError naming the file when it cannot be read.
[[nodiscard]] std::string sha256_of_file(const std::filesystem::path& path);

}  // namespace pleshard
