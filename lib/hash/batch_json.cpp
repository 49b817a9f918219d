#include "hash/batch_json.hpp"

#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/file_checks.hpp"
#include "io/json_values.hpp"
#include "io/requests.hpp"
#include "model/model_family.hpp"

namespace pleshard {

void add_batch_request(TokenBatch& batch, const ModelConfig& config, std::span<const std::int64_t> tokens,
                       std::optional<std::span<const std::int64_t>> context, const std::string& where,
                       TokenIds allowed) {
  const bool in_vocabulary = allowed == TokenIds::vocabulary || config.token_map != nullptr;
  const auto check = [&](std::span<const std::int64_t> ids, const std::string& what) {
    if (in_vocabulary) {
      check_token_range(ids, config.vocab_size, what);
      return;
    }
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (ids[i] < 0)
        throw InputError(what + "[" + std::to_string(i) + "] = " + std::to_string(ids[i]) +
                         ": token ids are non-negative");
  };
  check(tokens, where);
  if (!context) {
    batch.add_request(tokens, fresh_context(config.ngram_size));
    return;
  }
  // N-1 tokens, or for a family that says so fewer: the request began before them.
  const bool fits = static_cast<int>(context->size()) == batch.context_width ||
                    (family_of(config).short_contexts() && static_cast<int>(context->size()) < batch.context_width);
  if (!fits)
    throw InputError(where + ".context: has " + std::to_string(context->size()) + " tokens, expected " +
                     (family_of(config).short_contexts() ? "at most " : "") +
                     "ngram_size - 1 = " + std::to_string(batch.context_width));
  check(*context, where + ".context");
  batch.add_request(tokens, context_before(config.ngram_size, *context));
}

TokenBatch load_batch_json(const std::filesystem::path& path, const ModelConfig& config, TokenIds allowed) {
  const std::string source = path.string();
  require_regular_file(path, "batch");
  std::ifstream in(path);
  if (!in) throw InputError(source + ": cannot open batch file");
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source + ": not valid JSON: " + e.what());
  }
  if (!document.is_object() || !document.contains("requests") || !document["requests"].is_array())
    throw InputError(source + ": expected an object with a \"requests\" list");

  TokenBatch batch(config.ngram_size);
  std::vector<std::int64_t> tokens;
  std::vector<std::int64_t> context;
  const auto& requests = document["requests"];
  for (std::size_t r = 0; r < requests.size(); ++r) {
    const std::string where = source + ": requests[" + std::to_string(r) + "]";
    const auto& request = requests[r];
    if (!request.is_object() || !request.contains("tokens"))
      throw InputError(where + ": expected an object with a \"tokens\" list");
    read_token_list(request["tokens"], where + ".tokens", tokens);
    std::optional<std::span<const std::int64_t>> given;
    if (auto it = request.find("context"); it != request.end()) {
      read_token_list(*it, where + ".context", context);
      given = context;
    }
    add_batch_request(batch, config, tokens, given, where, allowed);
  }
  return batch;
}

}  // namespace pleshard
