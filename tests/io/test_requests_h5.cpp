// Request files as users write them: HDF5 from h5py or NumPy (any integer width, strings as
// h5py writes them by default) and JSONL; values that would change silently (floats, ids past
// int64) and files with no requests are one line naming the file.

#include <gtest/gtest.h>

#include <hdf5.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "../ckpt/checkpoint_fixtures.hpp"
#include "core/error.hpp"
#include "io/requests.hpp"

namespace {

using namespace pleshard;
using pleshard::testing_support::ScratchDir;

// A 1-D dataset `name` of `type` from `values` (converted from int64 or double by HDF5).
template <typename T>
void write_1d(hid_t file, const char* name, hid_t file_type, hid_t memory_type, const std::vector<T>& values) {
  const hsize_t n = values.size();
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t set = H5Dcreate2(file, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (n > 0) H5Dwrite(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  H5Dclose(set);
  H5Sclose(space);
}

std::string refusal(const std::filesystem::path& path) {
  try {
    (void)load_requests(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

class RequestFiles : public ::testing::Test {
 protected:
  std::filesystem::path h5(const std::string& name, hid_t token_type, const std::vector<double>& tokens, hid_t qsl_type,
                           const std::vector<double>& qsl) {
    const auto path = dir_ / name;
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    write_1d(file, "tokens", token_type, H5T_NATIVE_DOUBLE, tokens);
    write_1d(file, "query_start_loc", qsl_type, H5T_NATIVE_DOUBLE, qsl);
    H5Fclose(file);
    return path;
  }
  ScratchDir dir_;
};

TEST_F(RequestFiles, IntegersOfAnyWidth) {
  for (const hid_t type : {H5T_STD_I32LE, H5T_STD_U16LE, H5T_STD_U64BE, H5T_STD_I64LE}) {
    const auto requests = load_requests(h5("r.h5", type, {5, 6, 7}, type, {0, 2, 3}));
    ASSERT_EQ(requests.size(), 2u);
    EXPECT_EQ(requests[0].tokens, (std::vector<std::int64_t>{5, 6}));
    EXPECT_EQ(requests[1].tokens, (std::vector<std::int64_t>{7}));
  }
}

TEST_F(RequestFiles, FloatsAreRefusedNotTruncated) {
  const auto tokens = h5("t.h5", H5T_IEEE_F64LE, {167896.7, 5}, H5T_STD_I64LE, {0, 2});
  EXPECT_NE(refusal(tokens).find("t.h5: /tokens holds floating-point numbers; expected integers"), std::string::npos);
  const auto qsl = h5("q.h5", H5T_STD_I64LE, {1, 2}, H5T_IEEE_F32LE, {0, 2});
  EXPECT_NE(refusal(qsl).find("q.h5: /query_start_loc holds floating-point numbers"), std::string::npos);
}

TEST_F(RequestFiles, TokensPastInt64AreNamedAsTheyAre) {
  const auto path = dir_ / "big.h5";
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  write_1d(file, "tokens", H5T_STD_U64LE, H5T_NATIVE_UINT64,
           std::vector<std::uint64_t>{1, std::numeric_limits<std::uint64_t>::max()});
  write_1d(file, "query_start_loc", H5T_STD_I64LE, H5T_NATIVE_INT64, std::vector<std::int64_t>{0, 2});
  H5Fclose(file);
  EXPECT_NE(refusal(path).find("big.h5: /tokens[1] = 18446744073709551615 does not fit int64"), std::string::npos)
      << refusal(path);
}

// h5py writes str lists as variable-length UTF-8.
TEST_F(RequestFiles, RequestIdsAsH5pyWritesThem) {
  const auto path = h5("ids.h5", H5T_STD_I64LE, {1, 2, 3}, H5T_STD_I64LE, {0, 1, 3});
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  const std::vector<const char*> ids{"première", "b"};
  write_1d(file, "request_ids", type, type, ids);
  H5Tclose(type);
  H5Fclose(file);
  const auto requests = load_requests(path);
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].id, "première");
  EXPECT_EQ(requests[1].id, "b");
}

// A batch's contexts are refused, not ignored: a run's requests are whole.
TEST_F(RequestFiles, ABatchsContextsAreRefused) {
  const auto path = h5("ctx.h5", H5T_STD_I64LE, {1, 2, 3}, H5T_STD_I64LE, {0, 1, 3});
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  write_1d(file, "context", H5T_STD_I64LE, H5T_NATIVE_DOUBLE, std::vector<double>{7, 8});
  H5Fclose(file);
  EXPECT_NE(refusal(path).find("ctx.h5: /context: a run's request is whole"), std::string::npos) << refusal(path);
}

TEST_F(RequestFiles, NoRequestsIsOneLine) {
  EXPECT_NE(refusal(h5("none.h5", H5T_STD_I64LE, {}, H5T_STD_I64LE, {0})).find("none.h5: holds no requests"),
            std::string::npos);
  for (const char* text : {"", "\n  \n\t\n"}) {
    const auto path = dir_ / "blank.jsonl";
    std::ofstream(path) << text;
    EXPECT_NE(refusal(path).find("blank.jsonl: holds no requests (an empty or blank file)"), std::string::npos);
  }
}

}  // namespace
