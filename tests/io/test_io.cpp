// Batch JSON and request JSONL readers: accepted layouts and one-line errors naming the file.

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "hash/batch_json.hpp"
#include "io/requests.hpp"
#include "kernels/common/ngram_hash.hpp"
#include "model/model_config.hpp"

namespace {

using namespace pleshard;

class IoFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("pleshard_test_io_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    config_ = parse_model_config(nlohmann::json{{"vocab_size", 1000},
                                                {"eos_token_id", 2},
                                                {"num_hidden_layers", 2},
                                                {"ple_embed_dim", 32},
                                                {"ngram_size", 3},
                                                {"heads_per_ngram", 2},
                                                {"ple_layer_ids", {1}}},
                                 "cfg");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }

  void expect_batch_error(const std::string& text, const std::string& fragment) {
    const auto path = write("batch.json", text);
    try {
      (void)load_batch_json(path, config_);
      ADD_FAILURE() << "accepted " << text;
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(path.string() + ": ", 0), 0u) << message;
      EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }
  }

  std::filesystem::path dir_;
  ModelConfig config_;
};

TEST_F(IoFiles, BatchWithAndWithoutContext) {
  const auto path = write("batch.json", R"({"requests": [
      {"context": [7, 8], "tokens": [1, 2, 3]},
      {"tokens": []},
      {"tokens": [9223372036854775807]}]})");
  const TokenBatch batch = load_batch_json(path, config_, TokenIds::any_non_negative);
  EXPECT_EQ(batch.tokens, (std::vector<std::int64_t>{1, 2, 3, 9223372036854775807}));
  EXPECT_EQ(batch.query_start_loc, (std::vector<std::int64_t>{0, 3, 3, 4}));
  // A request without a context is fresh: its context is positions before it.
  constexpr std::int64_t before = kernels::k_before_request;
  EXPECT_EQ(batch.context, (std::vector<std::int64_t>{7, 8, before, before, before, before}));
}

TEST_F(IoFiles, BatchErrors) {
  expect_batch_error("{\"requests\": [", "not valid JSON");
  expect_batch_error("[]", "\"requests\"");
  expect_batch_error(R"({"requests": [{"context": [1, 2]}]})", "requests[0]");
  expect_batch_error(R"({"requests": [{"tokens": [1, 2.5]}]})", "requests[0].tokens[1] = 2.5");
  expect_batch_error(R"({"requests": [{"tokens": [1, 18446744073709551615]}]})", "tokens[1]");
  expect_batch_error(R"({"requests": [{"tokens": [1]}, {"tokens": [1], "context": [1]}]})",
                     "requests[1].context: has 1 tokens, expected ngram_size - 1 = 2");
  expect_batch_error(R"({"requests": [{"tokens": "abc"}]})", "requests[0].tokens");
}

TEST_F(IoFiles, MissingBatchFile) { EXPECT_THROW((void)load_batch_json(dir_ / "absent.json", config_), InputError); }

TEST_F(IoFiles, RequestsJsonl) {
  const auto path = write("r.jsonl", "{\"id\":\"a\",\"tokens\":[1,2]}\n\n{\"id\":5,\"tokens\":[3]}\n{\"tokens\":[]}\n");
  const auto requests = load_requests_jsonl(path);
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].id, "a");
  EXPECT_EQ(requests[1].id, "5");
  EXPECT_EQ(requests[2].id, "2");
  EXPECT_EQ(requests[0].tokens, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(total_tokens(requests), 3);
}

TEST_F(IoFiles, RequestsJsonlErrorsNameFileAndLine) {
  const auto path = write("r.jsonl", "{\"id\":\"a\",\"tokens\":[1,2]}\n{\"id\":\"b\",\"tokens\":[1,\"x\"]}\n");
  try {
    (void)load_requests_jsonl(path);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path.string() + ":2: tokens[1]", 0), 0u) << e.what();
  }
  const auto broken = write("b.jsonl", "{\"id\":\"a\",\"tokens\":[1,2]\n");
  EXPECT_THROW((void)load_requests_jsonl(broken), InputError);
  const auto no_tokens = write("c.jsonl", "{\"id\":\"a\"}\n");
  EXPECT_THROW((void)load_requests_jsonl(no_tokens), InputError);
}

// Ids are unique (a repeat names both lines; 5 and "5" are the same id, as are a missing
// id and the index it takes), strings or integers, without NUL characters.
TEST_F(IoFiles, RequestIdsAreUniqueAndPlain) {
  const auto expect_error = [&](const std::string& text, const std::string& fragment) {
    const auto path = write("ids.jsonl", text);
    try {
      (void)load_requests_jsonl(path);
      ADD_FAILURE() << "accepted " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(path.string() + ":", 0), 0u) << e.what();
    }
  };
  expect_error("{\"id\":\"a\",\"tokens\":[1]}\n{\"id\":\"a\",\"tokens\":[2]}\n", ":2: id \"a\" repeats that of");
  expect_error("{\"id\":5,\"tokens\":[1]}\n{\"id\":\"5\",\"tokens\":[2]}\n", "repeats that of");
  expect_error("{\"tokens\":[1]}\n{\"id\":\"0\",\"tokens\":[2]}\n", "id \"0\" repeats that of");
  expect_error("{\"id\":\"a\\u0000b\",\"tokens\":[1]}\n", ":1: id contains a NUL character");
  expect_error("{\"id\":[1],\"tokens\":[1]}\n", ":1: id = [1]: expected a string or an integer");
  expect_error("{\"id\":1e400,\"tokens\":[1]}\n", ":1: not valid JSON");
  // A batch's keys are refused, not ignored: a run's requests are whole.
  expect_error("{\"id\":\"a\",\"tokens\":[1],\"context\":[7]}\n", ":1: \"context\": a run's request is whole");
  expect_error("{\"tokens\":[1],\"query_start_loc\":[0,1]}\n", ":1: \"query_start_loc\"");
}

TEST_F(IoFiles, TokensOutsideTheVocabulary) {
  const auto path = write("batch.json", R"({"requests": [{"tokens": [1, 2]}, {"tokens": [3, 1000]}]})");
  try {
    (void)load_batch_json(path, config_);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("requests[1]: tokens[1] = 1000 is outside the vocabulary [0, 1000)"),
              std::string::npos)
        << e.what();
  }
  const auto negative = write("n.json", R"({"requests": [{"tokens": [1], "context": [-1, 2]}]})");
  EXPECT_THROW((void)load_batch_json(negative, config_), InputError);
  EXPECT_NO_THROW((void)load_batch_json(path, config_, TokenIds::any_non_negative));
  const auto requests = write("r.jsonl", "{\"id\":\"a\",\"tokens\":[1]}\n{\"id\":\"b\",\"tokens\":[1,-4]}\n");
  try {
    check_token_ranges(load_requests_jsonl(requests), 1000);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(requests.string() + ":2: tokens[1] = -4", 0), 0u) << e.what();
  }
}

TEST_F(IoFiles, InputsThatAreNotFilesAreRefusedWithoutOpening) {
  const auto fifo = dir_ / "fifo.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    (void)load_requests_jsonl(fifo);  // would block in open() for ever
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a FIFO"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)load_requests(dir_), InputError);  // a directory
  EXPECT_THROW((void)load_batch_json(fifo, config_), InputError);
}

TEST(SyntheticRequests, DeterministicZipfLike) {
  SyntheticRequestsSpec spec;
  spec.count = 50;
  spec.min_tokens = 10;
  spec.max_tokens = 100;
  spec.vocab_size = 5000;
  const auto a = make_synthetic_requests(spec);
  const auto b = make_synthetic_requests(spec);
  ASSERT_EQ(a.size(), 50u);
  std::int64_t low = 0;
  std::int64_t all = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].tokens, b[i].tokens);
    EXPECT_GE(a[i].tokens.size(), 10u);
    EXPECT_LE(a[i].tokens.size(), 100u);
    for (auto t : a[i].tokens) {
      EXPECT_GE(t, 0);
      EXPECT_LT(t, 5000);
      low += t < 50;
      ++all;
    }
  }
  // Zipf with s = 1.1 over 5000 ranks puts well over a third of the mass on the first 1%.
  EXPECT_GT(static_cast<double>(low) / static_cast<double>(all), 0.35);
  spec.seed += 1;
  EXPECT_NE(make_synthetic_requests(spec)[0].tokens, a[0].tokens);
}

// The requests against the plain draw: every token the first rank whose running sum of Zipf
// weights exceeds u x total (u from the same 53-bit stream), searched over the whole
// vocabulary; lengths first, then tokens, request by request.
std::vector<std::vector<std::int64_t>> plain_synthetic_tokens(const SyntheticRequestsSpec& spec) {
  std::vector<double> cdf;
  double sum = 0;
  for (std::int64_t r = 1; r <= spec.vocab_size; ++r) {
    sum += std::pow(static_cast<double>(r), -spec.zipf_exponent);
    cdf.push_back(sum);
  }
  std::uint64_t state = spec.seed;
  const auto next_unit = [&] {
    state += kernels::k_splitmix_gamma;
    return static_cast<double>(kernels::splitmix64(state) >> 11) * 0x1.0p-53;
  };
  std::vector<std::vector<std::int64_t>> out;
  for (std::int64_t i = 0; i < spec.count; ++i) {
    const auto length = spec.min_tokens + static_cast<std::int64_t>(
                                              next_unit() * static_cast<double>(spec.max_tokens - spec.min_tokens + 1));
    std::vector<std::int64_t> tokens;
    for (std::int64_t t = 0; t < length; ++t) {
      const double u = next_unit() * sum;
      std::int64_t rank = 0;
      while (rank + 1 < spec.vocab_size && cdf[static_cast<std::size_t>(rank)] <= u) ++rank;
      tokens.push_back(rank);
    }
    out.push_back(std::move(tokens));
  }
  return out;
}

TEST(SyntheticRequests, TokensAreThePlainZipfDraws) {
  for (const std::int64_t vocab : {1, 2, 3, 17, 1000, 20000})
    for (const double exponent : {0.0, 0.5, 1.1, 3.0}) {
      SyntheticRequestsSpec spec;
      spec.count = 20;
      spec.min_tokens = 1;
      spec.max_tokens = 300;
      spec.vocab_size = vocab;
      spec.zipf_exponent = exponent;
      spec.seed = static_cast<std::uint64_t>(vocab) * 31 + static_cast<std::uint64_t>(exponent * 10);
      const auto requests = make_synthetic_requests(spec);
      const auto expected = plain_synthetic_tokens(spec);
      ASSERT_EQ(requests.size(), expected.size());
      for (std::size_t i = 0; i < requests.size(); ++i)
        ASSERT_EQ(requests[i].tokens, expected[i])
            << "vocabulary " << vocab << ", exponent " << exponent << ", request " << i;
    }
}

}  // namespace

#include <sys/resource.h>

#include <csignal>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/synthetic.hpp"
#include "io/durable_file.hpp"

namespace {

// A file-size limit as a stand-in for a full disk: writes past it fail (EFBIG) instead of
// killing the process, until the guard goes.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    previous_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  void (*previous_)(int) = nullptr;
};

TEST(DurableFiles, AFailedWriteLeavesNoFileUnderTheFinalName) {
  const pleshard::testing_support::ScratchDir dir;
  {
    const FileSizeLimit limit(16);
    try {
      write_text_file(dir / "config.json", std::string(100, 'x'));
      ADD_FAILURE() << "a write past the limit succeeded";
    } catch (const SystemError& e) {
      EXPECT_NE(std::string(e.what()).find("config.json.partial: cannot write"), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "config.json"));
  write_text_file(dir / "config.json", "{}\n");
  std::ifstream in(dir / "config.json");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), "{}\n");
}

// A safetensors checkpoint written onto a disk that fills up: an error, and no file under a
// final name (no config.json, no index, no shard file) that a later job could take for
// complete. (HDF5 cannot close a file whose writes failed, and crashes when it shuts down
// later: an HDF5 checkpoint is refused before it starts where the disk is too small, and its
// disk is reserved before its first row.)
TEST(DurableFiles, ACheckpointOnAFullDiskIsAnErrorAndLeavesNothingComplete) {
  using namespace pleshard::testing_support;
  const ModelConfig config = small_config();
  const ScratchDir dir;
  // Into a directory the write makes: the directory goes too. Into one that was there: it
  // stays, with nothing complete in it.
  std::filesystem::create_directories(dir / "there");
  for (const char* name : {"made", "there"}) {
    {
      const FileSizeLimit limit(20'000);
      EXPECT_THROW(write_checkpoint(dir / name, config, synthetic_tables(config, RowFormat::bf16, 1),
                                    {CheckpointKind::safetensors, 2}),
                   Error);
    }
    if (std::string(name) == "made") {
      EXPECT_FALSE(std::filesystem::exists(dir / name));
      continue;
    }
    ASSERT_TRUE(std::filesystem::is_directory(dir / name));
    for (const auto& entry : std::filesystem::directory_iterator(dir / name))
      EXPECT_EQ(entry.path().extension(), ".partial") << entry.path();
  }
}

TEST(DurableFiles, AnHdf5CheckpointTooLargeForTheDiskIsRefusedBeforeItStarts) {
  using namespace pleshard::testing_support;
  ModelConfig config = small_config();
  const ScratchDir dir;
  auto tables = synthetic_tables(config, RowFormat::bf16, 1);
  tables.front().info.layout.rows = std::int64_t{1} << 50;  // 2^50 rows of 64 bytes: no disk holds them
  try {
    write_checkpoint(dir / "c.h5", config, tables, {CheckpointKind::hdf5});
    ADD_FAILURE() << "started";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("c.h5: the checkpoint needs"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "c.h5.partial"));
}

// Space that runs out after the check (here the file size limit) fails the reservation before
// the first row, leaving nothing; HDF5 is left able to shut down (this process ends cleanly)
// and to write the same checkpoint once there is room.
TEST(DurableFiles, AnHdf5CheckpointWhoseSpaceRunsOutFailsBeforeItsFirstRow) {
  using namespace pleshard::testing_support;
  const ModelConfig config = small_config();
  const ScratchDir dir;
  const auto tables = synthetic_tables(config, RowFormat::bf16, 1);
  {
    const FileSizeLimit limit(200'000);  // more than HDF5 writes when it creates a file
    try {
      write_checkpoint(dir / "c.h5", config, tables, {CheckpointKind::hdf5});
      ADD_FAILURE() << "written past the limit";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("c.h5.partial: cannot reserve the "), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "c.h5.partial"));
  EXPECT_FALSE(std::filesystem::exists(dir / "c.h5"));
  write_checkpoint(dir / "c.h5", config, tables, {CheckpointKind::hdf5});
  const auto checkpoint = open_ple_checkpoint(dir / "c.h5", config);
  checkpoint->verify_data({});
}

TEST(DurableFiles, ReservedSpaceIsTheFilesAndARefusalNamesIt) {
  const pleshard::testing_support::ScratchDir dir;
  write_text_file(dir / "f", "x");
  reserve_file_space(dir / "f", 1 << 20, "the test");
  EXPECT_GE(std::filesystem::file_size(dir / "f"), std::uintmax_t{1} << 20);
  const FileSizeLimit limit(1 << 16);
  try {
    reserve_file_space(dir / "f", 1 << 22, "the test");
    ADD_FAILURE() << "reserved past the limit";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("f: cannot reserve the 4194304 bytes the test needs"), std::string::npos)
        << e.what();
  }
}

}  // namespace
