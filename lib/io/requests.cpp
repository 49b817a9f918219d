#include "io/requests.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <numeric>
#include "io/file_checks.hpp"

#include <nlohmann/json.hpp>

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
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(where + ": not valid JSON: " + e.what());
    }
    if (!value.is_object() || !value.contains("tokens"))
      throw InputError(where + ": expected {\"id\": ..., \"tokens\": [...]}");
    Request request;
    if (auto id = value.find("id"); id != value.end()) {
      request.id = id->is_string() ? id->get<std::string>() : id->dump();
    } else {
      request.id = std::to_string(requests.size());
    }
    read_token_list(value["tokens"], where + ": tokens", request.tokens);
    requests.push_back(std::move(request));
  }
  return requests;
}

namespace {

// Uniform double in [0, 1) from 53 random bits: identical on every platform.
double unit_interval(std::uint64_t& state) {
  state += kernels::k_splitmix_gamma;
  return static_cast<double>(kernels::splitmix64(state) >> 11) * 0x1.0p-53;
}

}  // namespace

std::vector<Request> make_synthetic_requests(const SyntheticRequestsSpec& spec) {
  if (spec.count < 0 || spec.min_tokens < 1 || spec.max_tokens < spec.min_tokens || spec.vocab_size < 1)
    throw InputError(
        "synthetic requests: need count >= 0, 1 <= min_tokens <= max_tokens, "
        "vocab_size >= 1");
  std::vector<double> cdf(static_cast<std::size_t>(spec.vocab_size));
  double sum = 0;
  for (std::size_t r = 0; r < cdf.size(); ++r) {
    sum += std::pow(static_cast<double>(r + 1), -spec.zipf_exponent);
    cdf[r] = sum;
  }
  std::uint64_t state = spec.seed;
  std::vector<Request> requests(static_cast<std::size_t>(spec.count));
  for (std::size_t i = 0; i < requests.size(); ++i) {
    Request& request = requests[i];
    request.id = "synthetic-" + std::to_string(i);
    const auto span = static_cast<double>(spec.max_tokens - spec.min_tokens + 1);
    const auto length = spec.min_tokens + static_cast<std::int64_t>(unit_interval(state) * span);
    request.tokens.resize(static_cast<std::size_t>(length));
    for (auto& token : request.tokens) {
      const double u = unit_interval(state) * sum;
      token = std::upper_bound(cdf.begin(), cdf.end() - 1, u) - cdf.begin();
    }
  }
  return requests;
}

std::int64_t total_tokens(const std::vector<Request>& requests) {
  return std::accumulate(requests.begin(), requests.end(), std::int64_t{0}, [](std::int64_t sum, const Request& r) {
    return sum + static_cast<std::int64_t>(r.tokens.size());
  });
}

}  // namespace pleshard
