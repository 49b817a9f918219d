#pragma once
// A checkpoint as a user names it (--checkpoint, the Python module's checkpoint=): a path, or
// `synthetic` with a config — the tables `ckpt make` would write for it (its default seed and
// format), made where they are read, without files (real-size studies in seconds; the disk
// tier needs files).

#include <filesystem>
#include <memory>
#include <string>

#include "ckpt/ple_checkpoint.hpp"

namespace pleshard {

inline constexpr const char* k_synthetic_checkpoint = "synthetic";

// The named checkpoint's config: load_checkpoint_config's for a path (InputError where
// nothing is there), `config`'s for synthetic (which needs one), with its token map.
[[nodiscard]] ModelConfig load_named_checkpoint_config(const std::string& checkpoint,
                                                       const std::filesystem::path& config,
                                                       const std::filesystem::path& token_map);

// Opens it: open_ple_checkpoint for a path, the synthetic tables of `config` for synthetic.
[[nodiscard]] std::unique_ptr<PleCheckpoint> open_named_checkpoint(const std::string& checkpoint,
                                                                   const ModelConfig& config,
                                                                   const CheckpointOptions& options = {});

}  // namespace pleshard
