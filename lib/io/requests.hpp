#pragma once
// Requests of a batch job: from JSONL ({"id": ..., "tokens": [...]} per line) or a
// synthetic Zipf-like stream for examples and benchmarks.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace pleshard {

struct Request {
  std::string id;
  std::vector<std::int64_t> tokens;
};

// Reads every line; a malformed line is an InputError naming file and line number.
[[nodiscard]] std::vector<Request> load_requests_jsonl(const std::filesystem::path& path);

// HDF5 requests: /tokens (int64, all requests concatenated), /query_start_loc (int64,
// requests + 1 boundaries from 0), optional /request_ids (strings).
[[nodiscard]] std::vector<Request> load_requests_h5(const std::filesystem::path& path);

// By extension: .h5/.hdf5 as HDF5, anything else as JSONL.
[[nodiscard]] std::vector<Request> load_requests(const std::filesystem::path& path);

struct SyntheticRequestsSpec {
  std::int64_t count = 64;
  std::int64_t min_tokens = 16;
  std::int64_t max_tokens = 2048;
  std::int64_t vocab_size = 200'019;
  double zipf_exponent = 1.1;  // token rank r is drawn with weight 1 / r^s
  std::uint64_t seed = 42;
};

// Deterministic for a given spec on every rank and platform build.
[[nodiscard]] std::vector<Request> make_synthetic_requests(const SyntheticRequestsSpec& spec);

[[nodiscard]] std::int64_t total_tokens(const std::vector<Request>& requests);

}  // namespace pleshard
