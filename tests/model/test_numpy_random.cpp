// The port of NumPy's SeedSequence, PCG64 and int64 integers() against NumPy itself, run at
// test time (tests/model/numpy_draws.py under Debian's /usr/bin/python3).

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "model/numpy_random.hpp"

namespace {

using pleshard::numpy_integers;
using pleshard::Pcg64;
using pleshard::SeedSequence;

constexpr const char* k_python = "/usr/bin/python3";

struct NumpyOutput {
  std::string skip_reason;
  std::vector<std::string> lines;
};

NumpyOutput run_numpy_script() {
  NumpyOutput output;
  if (!std::filesystem::exists(k_python)) {
    output.skip_reason = std::string(k_python) + " not found; install python3-numpy (scripts/install-deps.sh)";
    return output;
  }
  const std::string command = std::string(k_python) + " " PLESHARD_SOURCE_DIR "/tests/model/numpy_draws.py";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    output.skip_reason = "cannot run " + command;
    return output;
  }
  std::string line;
  std::array<char, 4096> chunk{};
  while (std::fgets(chunk.data(), static_cast<int>(chunk.size()), pipe) != nullptr) {
    line += chunk.data();
    if (!line.empty() && line.back() == '\n') {
      line.pop_back();
      output.lines.push_back(line);
      line.clear();
    }
  }
  const int status = ::pclose(pipe);
  if (!output.lines.empty() && output.lines.front().starts_with("skip "))
    output.skip_reason = output.lines.front().substr(5) + " (install python3-numpy: scripts/install-deps.sh)";
  else
    EXPECT_EQ(status, 0) << command << " failed";
  return output;
}

// Reads whitespace-separated integers of any sign that fit 64 bits.
class Fields {
 public:
  explicit Fields(const std::string& line) : stream_(line) { stream_ >> kind_; }
  [[nodiscard]] const std::string& kind() const { return kind_; }
  std::uint64_t u64() {
    std::string text;
    stream_ >> text;
    return text.starts_with('-') ? static_cast<std::uint64_t>(std::stoll(text)) : std::stoull(text);
  }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }

 private:
  std::istringstream stream_;
  std::string kind_;
};

TEST(NumpyRandom, MatchesNumpyBitForBit) {
  const NumpyOutput numpy = run_numpy_script();
  if (!numpy.skip_reason.empty()) GTEST_SKIP() << numpy.skip_reason;
  int states = 0;
  int raws = 0;
  int calls = 0;
  for (const std::string& line : numpy.lines) {
    Fields fields(line);
    const std::uint64_t seed = fields.u64();
    if (fields.kind() == "state") {
      const std::vector<std::uint64_t> words = SeedSequence(seed).generate_state(fields.u64());
      for (std::size_t i = 0; i < words.size(); ++i) EXPECT_EQ(words[i], fields.u64()) << line << " word " << i;
      ++states;
    } else if (fields.kind() == "raw") {
      Pcg64 generator{SeedSequence(seed)};
      const std::uint64_t count = fields.u64();
      for (std::uint64_t i = 0; i < count; ++i)
        EXPECT_EQ(generator.next_u64(), fields.u64()) << line << " output " << i;
      ++raws;
    } else {
      ASSERT_EQ(fields.kind(), "draws") << line;
      Pcg64 generator{SeedSequence(seed)};
      const std::uint64_t call_count = fields.u64();
      for (std::uint64_t call = 0; call < call_count; ++call) {
        const std::int64_t low = fields.i64();
        const std::int64_t high = fields.i64();
        const std::vector<std::int64_t> draws = numpy_integers(generator, low, high, fields.u64());
        for (std::size_t i = 0; i < draws.size(); ++i)
          EXPECT_EQ(draws[i], fields.i64())
              << "seed " << seed << " call " << call << " integers(" << low << ", " << high << ") value " << i;
        ++calls;
      }
    }
  }
  EXPECT_GE(states, 20);
  EXPECT_GE(raws, 20);
  EXPECT_GE(calls, 1000);
}

// Known without NumPy: default_rng(0)'s first word, and where its halves go.
TEST(NumpyRandom, SeedZeroFirstWord) {
  Pcg64 generator{SeedSequence(0)};
  EXPECT_EQ(generator.next_u64(), 11749869230777074271ull);
  Pcg64 halves{SeedSequence(0)};
  EXPECT_EQ(halves.next_u32(), 11749869230777074271ull & 0xFFFFFFFFu);
  EXPECT_EQ(halves.next_u32(), 11749869230777074271ull >> 32);
}

TEST(NumpyRandom, EmptyRangeIsRefused) {
  Pcg64 generator{SeedSequence(1)};
  EXPECT_THROW((void)numpy_integers(generator, 5, 5, 1), pleshard::InputError);
  EXPECT_THROW((void)numpy_integers(generator, 6, 5, 1), pleshard::InputError);
}

}  // namespace
