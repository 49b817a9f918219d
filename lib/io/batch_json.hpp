#pragma once
// BATCH.json of `pleshard ids` / `embed` (DESIGN.md §7):
//   {"requests": [{"context": [N-1 ints], "tokens": [ints]}, ...]}
// "context" may be omitted for a fresh request (N-1 copies of EOS).

#include <filesystem>
#include <string>

#include "config/model_config.hpp"
#include "hash/token_batch.hpp"

namespace pleshard {

[[nodiscard]] TokenBatch load_batch_json(const std::filesystem::path& path, const ModelConfig& config);

}  // namespace pleshard
