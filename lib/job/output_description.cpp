#include "job/output_description.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/version.hpp"
#include "model/model_family.hpp"

namespace pleshard {

std::string identity_hex(std::uint64_t identity) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(identity));
  return text;
}

OutputDescription describe_output(const ModelConfig& config, OutDtype dtype, const OutputSource& source) {
  const std::string family = to_string(config.family);
  // decoder_layer is the config's own id (readers match it against the config's list), and
  // its base says how that family counts: renumbering one family's ids would shift them
  // under readers that already match them, with nothing in the file to tell.
  const std::int64_t base = family_of(config).first_layer_id();
  OutputDescription d;
  d.file = {{"pleshard_version", version_string()},
            {"writer", source.writer},
            {"family", family},
            {"config", to_json(config).dump()},
            {"checkpoint_identity", identity_hex(source.checkpoint_identity)},
            {"token_map_sha256", token_map_sha256(config)},
            {"requests", source.requests},
            {"requests_sha256", source.requests_sha256},
            {"out_dtype", std::string(to_string(dtype))},
            {"part_tokens", source.part_tokens}};
  for (int layer = 0; layer < config.num_ple_layers(); ++layer)
    d.layers.push_back({{"ple_index", std::int64_t{layer}},
                        {"decoder_layer", std::int64_t{config.ple_layer_ids[static_cast<std::size_t>(layer)]}},
                        {"decoder_layer_base", base},
                        {"family", family},
                        {"row_width", config.ple_embed_dim},
                        {"heads", std::int64_t{config.total_heads()}},
                        {"head_dim", std::int64_t{config.head_dim()}}});
  return d;
}

}  // namespace pleshard
