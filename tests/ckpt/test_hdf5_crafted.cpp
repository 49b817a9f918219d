// Crafted HDF5 checkpoints, each made from a valid one by editing it through the HDF5 API:
// attributes and small datasets of the wrong shape or type, hash buffers whose arithmetic
// would wrap, a flipped bit in a hash buffer, buffers rewritten consistently but not matching
// their fingerprint. Every case is an InputError naming the file; none reads past a buffer
// (the suite runs under ASan and UBSan in CI). Then a time-bounded fuzz of the same kinds of
// mutation, drawn at random: every mutant is opened and verified, and must either load or
// fail with a pleshard::Error.

#include <gtest/gtest.h>
#include <hdf5.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/ple_checkpoint.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;
namespace fs = std::filesystem;

// Opens a file for editing and closes it afterwards, checking every call.
class Edit {
 public:
  explicit Edit(const fs::path& path) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    file_ = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    EXPECT_GE(file_, 0) << path;
  }
  ~Edit() {
    if (file_ >= 0) H5Fclose(file_);
  }
  Edit(const Edit&) = delete;
  Edit& operator=(const Edit&) = delete;

  // Replaces attribute `name` of `object` with `count` elements of `type` (count 0: scalar).
  void attribute(const char* object, const char* name, hid_t type, hsize_t count, const void* data) {
    const hid_t o = H5Oopen(file_, object, H5P_DEFAULT);
    ASSERT_GE(o, 0) << object;
    if (H5Aexists(o, name) > 0) H5Adelete(o, name);
    const hid_t space = count == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr);
    const hid_t a = H5Acreate2(o, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(a, 0) << name;
    EXPECT_GE(H5Awrite(a, type, data), 0);
    H5Aclose(a);
    H5Sclose(space);
    H5Oclose(o);
  }

  // Replaces dataset `path` with `count` elements of `type` (count 0: scalar).
  void dataset(const char* path, hid_t type, hsize_t count, const void* data) {
    if (H5Lexists(file_, path, H5P_DEFAULT) > 0) H5Ldelete(file_, path, H5P_DEFAULT);
    const hid_t space = count == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr);
    const hid_t d = H5Dcreate2(file_, path, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(d, 0) << path;
    EXPECT_GE(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
    H5Dclose(d);
    H5Sclose(space);
  }

  void remove_attribute(const char* object, const char* name) {
    const hid_t o = H5Oopen(file_, object, H5P_DEFAULT);
    ASSERT_GE(o, 0) << object;
    EXPECT_GE(H5Adelete(o, name), 0) << name;
    H5Oclose(o);
  }

  // An array-of-strings type of `width` bytes per string.
  static hid_t strings(std::size_t width) {
    const hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, width);
    return t;
  }

 private:
  hid_t file_ = -1;
};

class CraftedHdf5 : public ::testing::Test {
 protected:
  void SetUp() override {
    write_checkpoint(path_, fp8_, synthetic_tables(fp8_, RowFormat::fp8, 2), {CheckpointKind::hdf5});
  }

  // Opens and verifies `path_` (with its config read from the file or `config`): an
  // InputError naming the file and containing `problem`.
  void expect_rejected(const std::string& problem, const ModelConfig* config = nullptr) {
    try {
      const ModelConfig c = config != nullptr ? *config : load_checkpoint_config(path_);
      const auto checkpoint = open_ple_checkpoint(path_, c);
      checkpoint->verify_data({});
      ADD_FAILURE() << "accepted; expected: " << problem;
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(path_.string()), std::string::npos) << message;
      EXPECT_NE(message.find(problem), std::string::npos) << message;
    }
  }

  ScratchDir dir_;
  fs::path path_ = dir_ / "ckpt.h5";
  ModelConfig fp8_ = small_config("float8_e4m3fn");
};

TEST_F(CraftedHdf5, GlobalScaleOfAThousandFloats) {
  const std::vector<float> many(1000, 0.5f);
  Edit(path_).dataset("/ple/0/global_scale", H5T_NATIVE_FLOAT, many.size(), many.data());
  expect_rejected("global_scale: expected one float", &fp8_);
}

TEST_F(CraftedHdf5, GlobalScaleOfTwoFloats) {
  const float two[2] = {0.5f, 7.0f};
  Edit(path_).dataset("/ple/0/global_scale", H5T_NATIVE_FLOAT, 2, two);
  expect_rejected("global_scale: expected one float", &fp8_);
}

TEST_F(CraftedHdf5, GlobalScaleThatIsAnInteger) {
  const std::int64_t one = 1;
  Edit(path_).dataset("/ple/1/global_scale", H5T_NATIVE_INT64, 0, &one);
  expect_rejected("global_scale: expected one float", &fp8_);
}

TEST_F(CraftedHdf5, HeadDimThatIsAnArray) {
  const std::int64_t dims[4] = {32, 32, 32, 32};
  Edit(path_).attribute("/ple/0", "head_dim", H5T_NATIVE_INT64, 4, dims);
  expect_rejected("attribute head_dim is not one integer", &fp8_);
}

TEST_F(CraftedHdf5, HeadDimThatTruncatesToTheRightValue) {
  const std::int64_t huge = (std::int64_t{1} << 32) + 32;  // 32 as an int
  Edit(path_).attribute("/ple/0", "head_dim", H5T_NATIVE_INT64, 0, &huge);
  expect_rejected("head_dim 4294967328, the config gives 32", &fp8_);
}

TEST_F(CraftedHdf5, FormatThatIsAnArrayOfStrings) {
  const char names[3][8] = {"fp8", "fp8", "fp8"};
  const hid_t type = Edit::strings(8);
  Edit(path_).attribute("/ple/0", "format", type, 3, names);
  H5Tclose(type);
  expect_rejected("attribute format is not one fixed-length string", &fp8_);
}

TEST_F(CraftedHdf5, ConfigThatIsAnArray) {
  const std::string text = "{\"vocab_size\": 1000}";
  std::vector<char> packed(text.size() * 2);
  std::copy(text.begin(), text.end(), packed.begin());
  std::copy(text.begin(), text.end(), packed.begin() + static_cast<std::ptrdiff_t>(text.size()));
  const hid_t type = Edit::strings(text.size());
  Edit(path_).attribute("/", "config", type, 2, packed.data());
  H5Tclose(type);
  expect_rejected("attribute config is not one fixed-length string");
}

TEST_F(CraftedHdf5, HeadBoundsThatWrap) {
  // offset + size = 2^63 wraps to a negative number. (Without the fingerprint, as another
  // writer would leave it, so the bounds are what refuses.)
  std::vector<std::int64_t> sizes(4, std::int64_t{1} << 62), offsets(4, std::int64_t{1} << 62);
  {
    Edit edit(path_);
    edit.remove_attribute("/ple/0", "fingerprint");
    edit.dataset("/ple/0/ngram_heads_vocab_sizes", H5T_NATIVE_INT64, sizes.size(), sizes.data());
    edit.dataset("/ple/0/ngram_heads_offsets", H5T_NATIVE_INT64, offsets.size(), offsets.data());
  }
  expect_rejected("lies outside", &fp8_);
}

TEST_F(CraftedHdf5, HeadOfSizeZeroOrNegativeOrOutsideTheTable) {
  const PleTableInfo table = open_ple_checkpoint(path_, fp8_)->table(0);
  Edit(path_).remove_attribute("/ple/0", "fingerprint");
  for (const std::int64_t bad : {std::int64_t{0}, std::int64_t{-5}, table.layout.rows + 1}) {
    std::vector<std::int64_t> edited = table.head_sizes;
    edited[2] = bad;
    Edit(path_).dataset("/ple/0/ngram_heads_vocab_sizes", H5T_NATIVE_INT64, edited.size(), edited.data());
    expect_rejected("head 2", &fp8_);
  }
}

TEST_F(CraftedHdf5, HashBuffersThatDoNotMatchTheirFingerprint) {
  // Rewritten consistently (no checksum fails), but not what the checkpoint was made with.
  std::vector<std::int64_t> offsets = open_ple_checkpoint(path_, fp8_)->table(1).head_offsets;
  std::swap(offsets[1], offsets[2]);
  Edit(path_).dataset("/ple/1/ngram_heads_offsets", H5T_NATIVE_INT64, offsets.size(), offsets.data());
  expect_rejected("do not match their fingerprint", &fp8_);
}

TEST_F(CraftedHdf5, OneBitFlippedInAHashBuffer) {
  const std::vector<std::int64_t> offsets = open_ple_checkpoint(path_, fp8_)->table(0).head_offsets;
  std::ifstream in(path_, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const std::string pattern(reinterpret_cast<const char*>(offsets.data()), offsets.size() * 8);
  const auto at = bytes.find(pattern);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 9] = static_cast<char>(bytes[at + 9] ^ 0x10);  // the second offset, one bit
  std::ofstream(path_, std::ios::binary | std::ios::trunc) << bytes;
  expect_rejected("", &fp8_);
}

// Mutations of the kinds above, drawn at random for a bounded time: each must load or fail
// with a pleshard::Error, and never read out of bounds.
TEST_F(CraftedHdf5, FuzzedAttributesDataspacesAndTypes) {
  const fs::path valid = dir_ / "valid.h5";
  fs::copy_file(path_, valid);
  std::mt19937_64 rng(20261201);
  const char* objects[] = {"/", "/ple/0", "/ple/1"};
  const char* attributes[] = {"format", "head_dim", "decoder_layer", "config", "fingerprint"};
  const char* datasets[] = {"global_scale", "layer_multipliers", "ngram_heads_vocab_sizes", "ngram_heads_offsets"};
  const hid_t types[] = {H5T_NATIVE_INT64, H5T_NATIVE_INT32, H5T_NATIVE_FLOAT, H5T_NATIVE_DOUBLE, H5T_NATIVE_UINT8};
  const auto start = std::chrono::steady_clock::now();
  int mutants = 0;
  int loaded = 0;
  while (mutants < 400 && std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
    fs::copy_file(valid, path_, fs::copy_options::overwrite_existing);
    {
      Edit edit(path_);
      std::vector<std::uint8_t> data(64 * 8);
      for (auto& b : data) b = static_cast<std::uint8_t>(rng());
      const hsize_t count = rng() % 4 == 0 ? 0 : 1 + rng() % 40;
      const bool as_string = rng() % 3 == 0;
      const hid_t type = as_string ? Edit::strings(1 + rng() % 12) : types[rng() % std::size(types)];
      if (rng() % 2 == 0) {
        edit.attribute(objects[rng() % std::size(objects)], attributes[rng() % std::size(attributes)], type, count,
                       data.data());
      } else {
        const std::string path = std::string(objects[1 + rng() % 2]) + "/" + datasets[rng() % std::size(datasets)];
        edit.dataset(path.c_str(), type, count, data.data());
      }
      if (as_string) H5Tclose(type);
    }
    ++mutants;
    try {
      const auto checkpoint = open_ple_checkpoint(path_, load_checkpoint_config(path_));
      checkpoint->verify_data({});
      ++loaded;
    } catch (const Error&) {
      // refused, with a message
    }
  }
  EXPECT_GE(mutants, 50);
  EXPECT_LT(loaded, mutants);  // most mutations must be noticed
}

}  // namespace
