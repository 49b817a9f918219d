#pragma once
// BATCH.json of `pleshard ids` / `embed` (DESIGN.md §7):
//   {"requests": [{"context": [N-1 ints], "tokens": [ints]}, ...]}
// "context" may be omitted for a fresh request (N-1 copies of EOS).

#include <filesystem>
#include <string>

#include "config/model_config.hpp"
#include "hash/token_batch.hpp"

namespace pleshard {

// Which token ids a batch may hold: those of the vocabulary (the embeddings of a model), or
// any 64-bit id (the hashing, which DESIGN.md §2 defines for every int64 with wrap-around).
enum class TokenIds { vocabulary, any_int64 };

[[nodiscard]] TokenBatch load_batch_json(const std::filesystem::path& path, const ModelConfig& config,
                                         TokenIds allowed = TokenIds::vocabulary);

}  // namespace pleshard
