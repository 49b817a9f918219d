#include "ckpt/same_model.hpp"

#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/collective.hpp"
#include "core/digest.hpp"
#include "core/same_on_every_rank.hpp"
#include "model/token_map.hpp"

namespace pleshard {

void require_same_model(MPI_Comm comm, const ModelConfig& config, const PleCheckpoint& checkpoint) {
  const std::uint64_t content = collective_try(comm, [&] { return checkpoint.content_identity(); });
  const std::uint64_t map = config.token_map != nullptr ? Digest().add(config.token_map->ids()).value() : 0;
  require_same_on_every_rank(
      comm,
      {{"the model config (its values)", static_cast<std::int64_t>(Digest().add(to_json(config).dump()).value()),
        false},
       {"the token map (its ids)", static_cast<std::int64_t>(map), false},
       {"the checkpoint (its tables and a sample of its files' bytes)", static_cast<std::int64_t>(content), false}},
      "the model");
}

}  // namespace pleshard
