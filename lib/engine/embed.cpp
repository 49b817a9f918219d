#include "engine/embed.hpp"

#include "exec/step_space.hpp"
#include "hash/ngram_ids.hpp"
#include "store/table_factory.hpp"

namespace pleshard {

std::vector<LayerEmbeddings> embed_batch(const ModelConfig& config, const PleCheckpoint& checkpoint,
                                         const TokenBatch& batch, OutDtype dtype, StorageTier tier) {
  std::vector<LayerEmbeddings> layers;
  const auto space = make_tier_space(tier);
  for (const auto& derived : derive_layer_specs(config)) {
    const PleTableInfo& info = checkpoint.table(derived.ple_index);
    const PleLayerSpec spec = hashing_spec(derived, info, checkpoint.path());
    const std::vector<std::int64_t> ids = compute_ngram_ids(spec, batch);
    LayerEmbeddings out;
    out.ple_index = derived.ple_index;
    // The table is held in `tier` for this lookup only.
    const auto table = make_table_tier(tier, checkpoint, derived.ple_index, {0, info.layout.rows}, *space);
    out.data = lookup_from_host(*table, *space, ids, dtype);
    layers.push_back(std::move(out));
  }
  return layers;
}

}  // namespace pleshard
