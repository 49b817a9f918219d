// Engram token maps from .npy files written here byte by byte: accepted layouts, and one
// line naming the file for each refusal.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ckpt/checkpoint_fixtures.hpp"
#include "core/error.hpp"
#include "io/npy_array.hpp"
#include "model/token_map.hpp"

namespace {

using pleshard::InputError;
using pleshard::read_npy_integers;
using pleshard::TokenMap;

// Little-endian bytes of each value, `width` bytes apiece.
std::string payload(const std::vector<std::int64_t>& values, int width) {
  std::string bytes;
  for (std::int64_t v : values)
    for (int i = 0; i < width; ++i) bytes += static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xFF);
  return bytes;
}

std::string npy_dict(const std::string& descr, const std::string& fortran_order, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran_order + ", 'shape': " + shape + ", }";
}

// A .npy file of format version major.0 as np.save writes one: the dict padded with spaces
// and a newline so that the data starts at a multiple of 64 bytes.
std::string npy_bytes(std::string dict, int major, const std::string& data) {
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::size_t unpadded = 8 + length_bytes + dict.size() + 1;
  dict += std::string((64 - unpadded % 64) % 64, ' ') + "\n";
  std::string bytes = "\x93NUMPY";
  bytes += static_cast<char>(major);
  bytes += '\0';
  for (std::size_t i = 0; i < length_bytes; ++i) bytes += static_cast<char>((dict.size() >> (8 * i)) & 0xFF);
  return bytes + dict + data;
}

// A well-formed 1-D file of `values` as '<i4' or '<i8'.
std::string npy_vector(const std::vector<std::int64_t>& values, const std::string& descr = "<i8", int major = 1) {
  const std::string shape = "(" + std::to_string(values.size()) + ",)";
  return npy_bytes(npy_dict(descr, "False", shape), major, payload(values, descr == "<i4" ? 4 : 8));
}

class TokenMapFiles : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& name, const std::string& bytes) {
    auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  // Loading fails with one line that names the file and says `what`.
  static void expect_map_refusal(const std::filesystem::path& path, std::int64_t vocab, std::int64_t compressed,
                                 const std::string& what) {
    try {
      (void)TokenMap::load(path, vocab, compressed);
      ADD_FAILURE() << path << ": accepted, expected a refusal saying '" << what << "'";
    } catch (const InputError& error) {
      const std::string message = error.what();
      EXPECT_TRUE(message.starts_with(path.string() + ": ")) << message;
      EXPECT_NE(message.find(what), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }

  pleshard::testing_support::ScratchDir dir_;
};

const std::vector<std::int64_t> k_map = {3, 0, 1, 1, 2, 4, 0, 3};  // vocab 8, C 5

TEST_F(TokenMapFiles, LoadsInt32AndInt64InEveryFormatVersion) {
  for (const std::string descr : {"<i4", "<i8"}) {
    for (int major : {1, 2, 3}) {
      const auto path =
          write("map" + descr.substr(1) + std::to_string(major) + ".npy", npy_vector(k_map, descr, major));
      const TokenMap map = TokenMap::load(path, 8, 5);
      EXPECT_EQ(std::vector<std::int64_t>(map.ids().begin(), map.ids().end()), k_map) << path;
      EXPECT_EQ(map.vocab_size(), 8);
      EXPECT_EQ(map.compressed_vocab(), 5);
      EXPECT_EQ(map.compressed_id(5), 4);
    }
  }
}

TEST_F(TokenMapFiles, Int32ValuesAreSignExtended) {
  const std::vector<std::int64_t> values = {-1, INT32_MIN, INT32_MAX, 0};
  EXPECT_EQ(read_npy_integers(write("i4.npy", npy_vector(values, "<i4"))), values);
  const std::vector<std::int64_t> wide = {-1, INT64_MIN, INT64_MAX};
  EXPECT_EQ(read_npy_integers(write("i8.npy", npy_vector(wide))), wide);
}

TEST_F(TokenMapFiles, Identity) {
  const TokenMap map = TokenMap::identity(129280);
  EXPECT_EQ(map.vocab_size(), 129280);
  EXPECT_EQ(map.compressed_vocab(), 129280);
  for (std::int64_t token : {0, 1, 77, 129279}) EXPECT_EQ(map.compressed_id(token), token);
  EXPECT_THROW((void)TokenMap::identity(0), InputError);
}

TEST_F(TokenMapFiles, RefusesFilesThatAreNotIntegerVectors) {
  expect_map_refusal(dir_ / "missing.npy", 8, 5, "token map not found");
  expect_map_refusal(write("text.npy", "token,id\n0,3\n"), 8, 5, "not a NumPy .npy file");
  expect_map_refusal(write("tiny.npy", "\x93NU"), 8, 5, "not a NumPy .npy file");
  const std::string data = payload(k_map, 8);
  expect_map_refusal(write("f4.npy", npy_bytes(npy_dict("<f4", "False", "(16,)"), 1, data)), 8, 5,
                     "dtype '<f4' is not int32 or int64");
  expect_map_refusal(write("u8.npy", npy_bytes(npy_dict("<u8", "False", "(8,)"), 1, data)), 8, 5,
                     "dtype '<u8' is not int32 or int64");
  expect_map_refusal(write("be.npy", npy_bytes(npy_dict(">i8", "False", "(8,)"), 1, data)), 8, 5,
                     "dtype '>i8' is big-endian");
  expect_map_refusal(write("fortran.npy", npy_bytes(npy_dict("<i8", "True", "(8,)"), 1, data)), 8, 5, "Fortran order");
  expect_map_refusal(write("2d.npy", npy_bytes(npy_dict("<i8", "False", "(2, 4)"), 1, data)), 8, 5,
                     "shape (2, 4) is not one-dimensional");
  expect_map_refusal(write("0d.npy", npy_bytes(npy_dict("<i8", "False", "()"), 1, payload({3}, 8))), 8, 5,
                     "shape () is not one-dimensional");
  expect_map_refusal(write("v4.npy", npy_bytes(npy_dict("<i8", "False", "(8,)"), 4, data)), 8, 5,
                     "version 4.0 is not supported");
  expect_map_refusal(write("dict.npy", npy_bytes(npy_dict("<i8", "Maybe", "(8,)"), 1, data)), 8, 5,
                     "cannot parse the .npy header");

  const std::string whole = npy_vector(k_map);
  std::string unknown_key = whole;
  unknown_key.replace(whole.find("descr"), 5, "dtype");
  expect_map_refusal(write("unknown_key.npy", unknown_key), 8, 5, "cannot parse the .npy header");
  std::string missing_key = whole;
  const std::string fortran = "'fortran_order': False, ";
  missing_key.replace(whole.find(fortran), fortran.size(), std::string(fortran.size(), ' '));
  expect_map_refusal(write("missing_key.npy", missing_key), 8, 5, "header lacks one of 'descr'");
  expect_map_refusal(write("short.npy", whole.substr(0, whole.size() - 3)), 8, 5,
                     "holds 61 bytes of data; its header says 8 values of 8 bytes");
  expect_map_refusal(write("long.npy", whole + "extra"), 8, 5, "holds 69 bytes of data");
  expect_map_refusal(write("cut_header.npy", whole.substr(0, 40)), 8, 5, "ends inside its .npy header");
}

TEST_F(TokenMapFiles, RefusesMapsThatDoNotFitTheConfig) {
  const auto path = write("map.npy", npy_vector(k_map));
  expect_map_refusal(path, 129280, 5, "token map has 8 entries, vocab_size is 129280");
  expect_map_refusal(write("negative.npy", npy_vector({3, 0, -1, 1, 2, 4, 0, 3})), 8, 5,
                     "token map entry 2 is -1, not in [0, engram_compressed_vocab_size = 5)");
  expect_map_refusal(path, 8, 4, "token map entry 5 is 4, not in [0, engram_compressed_vocab_size = 4)");
  expect_map_refusal(path, 8, 6, "token map's largest id is 4, expected engram_compressed_vocab_size - 1 = 5");
}

}  // namespace
