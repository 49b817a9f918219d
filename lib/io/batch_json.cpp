#include "io/batch_json.hpp"

#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/file_checks.hpp"
#include "io/json_values.hpp"
#include "io/requests.hpp"

namespace pleshard {

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
    if (allowed == TokenIds::vocabulary) check_token_range(tokens, config.vocab_size, where);
    if (auto it = request.find("context"); it != request.end()) {
      read_token_list(*it, where + ".context", context);
      if (static_cast<int>(context.size()) != batch.context_width)
        throw InputError(where + ".context: has " + std::to_string(context.size()) +
                         " tokens, expected ngram_size - 1 = " + std::to_string(batch.context_width));
      if (allowed == TokenIds::vocabulary) check_token_range(context, config.vocab_size, where + ".context");
    } else {
      context = fresh_context(config.ngram_size, config.eos_token_id);
    }
    batch.add_request(tokens, context);
  }
  return batch;
}

}  // namespace pleshard
