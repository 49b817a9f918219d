#pragma once
// Requests of a batch job: from JSONL ({"id": ..., "tokens": [...]} per line) or a
// synthetic Zipf-like stream for examples and benchmarks.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace pleshard {

class Digest;

struct Request {
  std::string id;
  std::vector<std::int64_t> tokens;
  std::string where = {};  // "<file>:<line>" (JSONL) or "<file>: request <r>" (HDF5), for messages
};

// Reads every line; a malformed line is an InputError naming file and line number. An id is
// a string or an integer (kept as its decimal text), without NUL characters; a line without
// one gets its request's index. Ids are unique: a repeat names both lines.
[[nodiscard]] std::vector<Request> load_requests_jsonl(const std::filesystem::path& path);

// HDF5 requests: /tokens (int64, all requests concatenated), /query_start_loc (int64,
// requests + 1 boundaries from 0), optional /request_ids (strings, unique).
[[nodiscard]] std::vector<Request> load_requests_h5(const std::filesystem::path& path);

// By extension: .h5/.hdf5 as HDF5, anything else as JSONL.
[[nodiscard]] std::vector<Request> load_requests(const std::filesystem::path& path);

// InputError "<where>: tokens[i] = t is outside the vocabulary [0, vocab_size)" for the
// first token outside it.
void check_token_range(std::span<const std::int64_t> tokens, std::int64_t vocab_size, const std::string& where);
void check_token_ranges(const std::vector<Request>& requests, std::int64_t vocab_size);

// InputError naming both requests when two share an id.
void check_unique_ids(const std::vector<Request>& requests);

// The requests' ids and tokens, in order, into `digest`.
void add_requests(Digest& digest, const std::vector<Request>& requests);

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
