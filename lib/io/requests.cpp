#include "io/requests.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <numeric>
#include <string_view>
#include <unordered_map>

#include "io/file_checks.hpp"

#include <nlohmann/json.hpp>

#include "core/digest.hpp"
#include "core/error.hpp"
#include "io/json_values.hpp"
#include "kernels/common/ngram_hash.hpp"

namespace pleshard {

std::vector<Request> load_requests_jsonl(const std::filesystem::path& path) {
  const std::string source = path.string();
  require_regular_file(path, "requests file");
  std::ifstream in(path);
  if (!in) throw InputError(source + ": cannot open requests file");
  std::vector<Request> requests;
  std::string line;
  for (std::int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = source + ":" + std::to_string(number);
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(where + ": not valid JSON: " + e.what());
    }
    if (!value.is_object() || !value.contains("tokens"))
      throw InputError(where + ": expected {\"id\": ..., \"tokens\": [...]}");
    // A batch's keys (ids, embed) would be silently ignored here: a run's request is whole.
    for (const char* key : {"context", "query_start_loc"})
      if (value.contains(key))
        throw InputError(where + ": \"" + key +
                         "\": a run's request is whole, hashed from its first token; only \"id\" and \"tokens\" "
                         "are read");
    Request request;
    request.where = where;
    if (auto id = value.find("id"); id != value.end()) {
      if (!id->is_string() && !id->is_number_integer())
        throw InputError(where + ": id = " + id->dump() + ": expected a string or an integer");
      request.id = id->is_string() ? id->get<std::string>() : id->dump();
      if (request.id.find('\0') != std::string::npos) throw InputError(where + ": id contains a NUL character");
    } else {
      request.id = std::to_string(requests.size());
    }
    read_token_list(value["tokens"], where + ": tokens", request.tokens);
    requests.push_back(std::move(request));
  }
  if (requests.empty()) throw InputError(source + ": holds no requests (an empty or blank file)");
  check_unique_ids(requests);
  return requests;
}

void check_unique_ids(const std::vector<Request>& requests) {
  std::unordered_map<std::string_view, const Request*> seen;
  for (const Request& r : requests)
    if (const auto [it, fresh] = seen.emplace(r.id, &r); !fresh)
      throw InputError(r.where + ": id \"" + r.id + "\" repeats that of " + it->second->where);
}

void check_token_range(std::span<const std::int64_t> tokens, std::int64_t vocab_size, const std::string& where) {
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab_size)
      throw InputError(where + ": tokens[" + std::to_string(i) + "] = " + std::to_string(tokens[i]) +
                       " is outside the vocabulary [0, " + std::to_string(vocab_size) + ")");
}

void check_token_ranges(const std::vector<Request>& requests, std::int64_t vocab_size) {
  for (const Request& r : requests) check_token_range(r.tokens, vocab_size, r.where);
}

namespace {

// Uniform double in [0, 1) from 53 random bits: identical on every platform.
double unit_interval(std::uint64_t& state) {
  state += kernels::k_splitmix_gamma;
  return static_cast<double>(kernels::splitmix64(state) >> 11) * 0x1.0p-53;
}

// Token ranks drawn from the Zipf weights' running sums: rank_of(u) is the first rank whose
// sum exceeds u (the last rank if none does). A guide table of as many equal slices of the
// total as there are ranks names the ranks each slice's draws can land on, so that a draw
// searches a few neighbouring sums rather than the whole vocabulary's: a large --synthetic
// job waited seconds for its draws before its first step. Where rounding puts a draw outside
// its slice's ranks it searches them all: the same rank either way.
class ZipfRanks {
 public:
  ZipfRanks(std::int64_t vocab_size, double exponent) : cdf_(static_cast<std::size_t>(vocab_size)) {
    for (std::size_t r = 0; r < cdf_.size(); ++r) {
      sum_ += std::pow(static_cast<double>(r + 1), -exponent);
      cdf_[r] = sum_;
    }
    slice_ = sum_ / static_cast<double>(cdf_.size());
    guide_.resize(cdf_.size() + 1);
    for (std::size_t k = 0; k < cdf_.size(); ++k) guide_[k] = search(0, last(), static_cast<double>(k) * slice_);
    guide_.back() = last();
  }

  [[nodiscard]] double sum() const { return sum_; }

  [[nodiscard]] std::int64_t rank_of(double u) const {
    const auto k = std::min(static_cast<std::size_t>(u / slice_), cdf_.size() - 1);
    const std::size_t lo = guide_[k];
    const std::size_t hi = guide_[k + 1];
    const bool inside = (lo == 0 || cdf_[lo - 1] <= u) && (hi == last() || cdf_[hi] > u);
    return static_cast<std::int64_t>(inside ? search(lo, hi, u) : search(0, last(), u));
  }

 private:
  [[nodiscard]] std::size_t last() const { return cdf_.size() - 1; }
  [[nodiscard]] std::size_t search(std::size_t lo, std::size_t hi, double u) const {
    return static_cast<std::size_t>(std::upper_bound(cdf_.begin() + static_cast<std::ptrdiff_t>(lo),
                                                     cdf_.begin() + static_cast<std::ptrdiff_t>(hi), u) -
                                    cdf_.begin());
  }

  std::vector<double> cdf_;
  std::vector<std::size_t> guide_;
  double sum_ = 0;
  double slice_ = 0;
};

}  // namespace

std::vector<Request> make_synthetic_requests(const SyntheticRequestsSpec& spec) {
  if (spec.count < 0 || spec.min_tokens < 1 || spec.max_tokens < spec.min_tokens || spec.vocab_size < 1)
    throw InputError(
        "synthetic requests: need count >= 0, 1 <= min_tokens <= max_tokens, "
        "vocab_size >= 1");
  const ZipfRanks ranks(spec.vocab_size, spec.zipf_exponent);
  std::uint64_t state = spec.seed;
  std::vector<Request> requests(static_cast<std::size_t>(spec.count));
  for (std::size_t i = 0; i < requests.size(); ++i) {
    Request& request = requests[i];
    request.id = "synthetic-" + std::to_string(i);
    const auto span = static_cast<double>(spec.max_tokens - spec.min_tokens + 1);
    const auto length = spec.min_tokens + static_cast<std::int64_t>(unit_interval(state) * span);
    request.tokens.resize(static_cast<std::size_t>(length));
    for (auto& token : request.tokens) token = ranks.rank_of(unit_interval(state) * ranks.sum());
  }
  return requests;
}

std::int64_t total_tokens(const std::vector<Request>& requests) {
  return std::accumulate(requests.begin(), requests.end(), std::int64_t{0}, [](std::int64_t sum, const Request& r) {
    return sum + static_cast<std::int64_t>(r.tokens.size());
  });
}

void add_requests(Digest& digest, const std::vector<Request>& requests) {
  for (const Request& r : requests) {
    digest.add(r.id);
    digest.add({reinterpret_cast<const std::uint8_t*>(r.tokens.data()), r.tokens.size() * sizeof(r.tokens[0])});
  }
}

}  // namespace pleshard
