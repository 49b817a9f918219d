#include "ckpt/checkpoint_token_map.hpp"

#include <memory>
#include <string>
#include <vector>

#include "ckpt/hdf5_ple.hpp"
#include "ckpt/ple_checkpoint.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/option_names.hpp"
#include "model/model_family.hpp"

namespace pleshard {

namespace fs = std::filesystem;

namespace {

using MapPtr = std::shared_ptr<const TokenMap>;

MapPtr map_file(const ModelConfig& config, const fs::path& file) {
  return std::make_shared<const TokenMap>(TokenMap::load(file, config.vocab_size, config.engram.compressed_vocab));
}

}  // namespace

MapPtr carried_token_map(const ModelConfig& config, const fs::path& checkpoint) {
  if (!family_of(config).hashes_through_token_map() || !fs::exists(checkpoint)) return nullptr;
  const fs::path h5 = hdf5_checkpoint_file(checkpoint);
  if (!h5.empty())
    if (auto ids = detail::read_hdf5_token_map(h5))
      return std::make_shared<const TokenMap>(TokenMap::from_ids(std::move(*ids), config.vocab_size,
                                                                 config.engram.compressed_vocab,
                                                                 h5.string() + ":/" + detail::k_token_map_dataset));
  const fs::path dir = fs::is_directory(checkpoint) ? checkpoint : checkpoint.parent_path();
  const fs::path beside = (dir.empty() ? fs::path(".") : dir) / k_token_map_file;
  return fs::exists(beside) ? map_file(config, beside) : nullptr;
}

namespace {

// The map beside the config, where it is another file than `carried`'s.
MapPtr map_beside_config(const ModelConfig& config, const MapPtr& carried) {
  if (config.file.empty()) return nullptr;
  const fs::path beside =
      (config.file.has_parent_path() ? config.file.parent_path() : fs::path(".")) / k_token_map_file;
  if (!fs::exists(beside)) return nullptr;
  std::error_code ignored;
  if (carried != nullptr && !carried->file().empty() && fs::equivalent(beside, carried->file(), ignored))
    return nullptr;
  return map_file(config, beside);
}

std::string short_digest(const TokenMap& map) { return map.sha256().substr(0, 12); }

}  // namespace

void take_checkpoint_token_map(ModelConfig& config, const fs::path& checkpoint, const fs::path& token_map) {
  if (!family_of(config).hashes_through_token_map()) {
    if (!token_map.empty()) use_token_map(config, token_map);  // refused there, naming the family
    return;
  }
  const MapPtr carried = carried_token_map(config, checkpoint);
  const MapPtr beside = map_beside_config(config, carried);
  if (!token_map.empty()) {
    use_token_map(config, token_map);
    for (const MapPtr& found : {carried, beside})
      if (found != nullptr && found->sha256() != config.token_map->sha256())
        log_warning(token_map.string() + ": " + option_name(Option::token_map) + " differs from " + found->source() +
                    " (sha256 " + short_digest(*config.token_map) + "... against " + short_digest(*found) +
                    "...); hashing through " + option_name(Option::token_map) + " as asked");
    return;
  }
  if (carried != nullptr && beside != nullptr && carried->sha256() != beside->sha256())
    throw InputError(beside->source() + " and " + carried->source() + ": two different token maps (sha256 " +
                     short_digest(*beside) + "... and " + short_digest(*carried) +
                     "...); the checkpoint's tables were made with one of them: name it with " +
                     option_name(Option::token_map));
  config.token_map = carried != nullptr ? carried : beside;
}

}  // namespace pleshard
