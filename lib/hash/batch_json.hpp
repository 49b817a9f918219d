#pragma once
// BATCH.json of `pleshard ids` / `embed`:
//   {"requests": [{"context": [N-1 ints], "tokens": [ints]}, ...]}
// "context" may be omitted for a fresh request; families whose requests may begin inside a
// context (Engram) take fewer than N-1 context tokens too.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "hash/token_batch.hpp"
#include "model/model_config.hpp"

namespace pleshard {

// Which token ids a batch may hold: those of the vocabulary (the embeddings of a model), or
// any non-negative 64-bit id (the hashing, defined for every such id with wrap-around;
// negative values mark positions before a request), except where the family hashes
// through a token map, which only the vocabulary's ids index.
enum class TokenIds { vocabulary, any_non_negative };

// Appends one request as BATCH.json gives it: `tokens` checked as `allowed` says, `context`
// the tokens just before them (N-1, or fewer where the family allows it; nullopt: a fresh
// request). InputError naming `where`.
void add_batch_request(TokenBatch& batch, const ModelConfig& config, std::span<const std::int64_t> tokens,
                       std::optional<std::span<const std::int64_t>> context, const std::string& where,
                       TokenIds allowed = TokenIds::vocabulary);

[[nodiscard]] TokenBatch load_batch_json(const std::filesystem::path& path, const ModelConfig& config,
                                         TokenIds allowed = TokenIds::vocabulary);

}  // namespace pleshard
