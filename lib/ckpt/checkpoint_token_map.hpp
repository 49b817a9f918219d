#pragma once
// Which token map an Engram checkpoint is hashed through (docs/design.md §10). The map
// decides every row id, so exactly one is used and it is never a silent choice:
// - `--token-map FILE` when given (a warning where the checkpoint carries another);
// - else the map the checkpoint carries: a native HDF5 checkpoint's /engram_token_map, else
//   engram_token_map.npy in the checkpoint's directory (beside a .safetensors or .h5 file);
// - else the one beside the config (--config in another directory).
// Where the checkpoint and the config's directory each have a map and they differ, the
// command is refused naming both: the tables were made with one of them.

#include <filesystem>
#include <memory>

#include "model/model_config.hpp"

namespace pleshard {

// The map the checkpoint carries (above), checked against the config's vocabulary; null where
// it carries none or the config's family hashes through none. Part of the checkpoint's
// content identity (PleCheckpoint::content_identity).
[[nodiscard]] std::shared_ptr<const TokenMap> carried_token_map(const ModelConfig& config,
                                                                const std::filesystem::path& checkpoint);

// Sets config.token_map by the rule above, where the config's family hashes through a map
// (else a `token_map` given is an InputError, as use_token_map says). `checkpoint` is the
// --checkpoint path.
void take_checkpoint_token_map(ModelConfig& config, const std::filesystem::path& checkpoint,
                               const std::filesystem::path& token_map);

}  // namespace pleshard
