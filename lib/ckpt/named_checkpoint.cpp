#include "ckpt/named_checkpoint.hpp"

#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "core/option_names.hpp"

namespace pleshard {

ModelConfig load_named_checkpoint_config(const std::string& checkpoint, const std::filesystem::path& config,
                                         const std::filesystem::path& token_map) {
  if (checkpoint == k_synthetic_checkpoint) {
    if (config.empty())
      throw InputError(option_is(Option::checkpoint, k_synthetic_checkpoint) + " needs " + option_name(Option::config));
    return load_model_config(config, token_map);
  }
  // Checked by every rank before any collective open (MPI-IO opens wait for all ranks).
  if (!std::filesystem::exists(checkpoint)) throw InputError(checkpoint + ": checkpoint not found");
  return load_checkpoint_config(checkpoint, config, token_map);
}

std::unique_ptr<PleCheckpoint> open_named_checkpoint(const std::string& checkpoint, const ModelConfig& config,
                                                     const CheckpointOptions& options) {
  if (checkpoint == k_synthetic_checkpoint)
    return synthetic_checkpoint(config, default_format(config), k_default_synthetic_seed);
  return open_ple_checkpoint(checkpoint, config, options);
}

}  // namespace pleshard
