// SHA-256 against FIPS 180-4's examples and a million 'a's; the same digest however the
// bytes are cut into add() calls; a file's digest as sha256sum gives it.

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/sha256.hpp"

namespace {

using pleshard::Sha256;

std::string sha(const std::string& text) {
  return Sha256().add({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()}).hex();
}

TEST(Sha256, StandardExamples) {
  EXPECT_EQ(sha(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecesMakeTheWhole) {
  std::vector<std::uint8_t> bytes(1000);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 7 + 3);
  const std::string whole = Sha256().add(bytes).hex();
  for (const std::size_t piece : {1, 3, 55, 56, 63, 64, 65, 128, 999}) {
    Sha256 cut;
    for (std::size_t at = 0; at < bytes.size(); at += piece)
      cut.add(std::span<const std::uint8_t>(bytes).subspan(at, std::min(piece, bytes.size() - at)));
    EXPECT_EQ(cut.hex(), whole) << "pieces of " << piece;
  }
}

TEST(Sha256, OfAFile) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "pleshard_sha256_test.txt";
  std::ofstream(path, std::ios::binary) << "abc";
  EXPECT_EQ(pleshard::sha256_of_file(path), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::filesystem::remove(path);
  EXPECT_THROW((void)pleshard::sha256_of_file(path), pleshard::InputError);
}

}  // namespace
