#include "engine/embed.hpp"

#include "core/error.hpp"

#include "exec/step_space.hpp"
#include "hash/ngram_ids.hpp"
#include "store/table_factory.hpp"

namespace pleshard {

namespace {

// Looks `ids` up in table `d` of the checkpoint, held in `tier` for the duration.
void lookup(const PleCheckpoint& checkpoint, int d, StorageTier tier, const std::vector<std::int64_t>& ids,
            OutDtype dtype, std::vector<std::uint8_t>& out) {
  const auto space = make_tier_space(tier);
  const auto table = make_table_tier(tier, checkpoint, d, {0, checkpoint.table(d).layout.rows}, *space);
  SpaceBuffer space_ids(*space);
  SpaceBuffer space_out(*space);
  space_ids.reserve(std::max<std::size_t>(1, ids.size() * sizeof(std::int64_t)));
  space_out.reserve(std::max<std::size_t>(1, out.size()));
  space->copy_from_host(space_ids.data(), ids.data(), ids.size() * sizeof(std::int64_t));
  table->lookup(space_ids.as<std::int64_t>(), static_cast<std::int64_t>(ids.size()), dtype, space_out.data());
  space->copy_to_host(out.data(), space_out.data(), out.size());
}

}  // namespace

std::vector<LayerEmbeddings> embed_batch(const ModelConfig& config, const PleCheckpoint& checkpoint,
                                         const TokenBatch& batch, OutDtype dtype, StorageTier tier) {
  std::vector<LayerEmbeddings> layers;
  for (const auto& derived : derive_layer_specs(config)) {
    const PleTableInfo& info = checkpoint.table(derived.ple_index);
    const PleLayerSpec spec = hashing_spec(derived, info, checkpoint.path());
    const std::vector<std::int64_t> ids = compute_ngram_ids(spec, batch);
    LayerEmbeddings out;
    out.ple_index = derived.ple_index;
    out.data.resize(ids.size() * static_cast<std::size_t>(info.layout.head_dim) * kernels::out_bytes(dtype));
    lookup(checkpoint, derived.ple_index, tier, ids, dtype, out.data);
    layers.push_back(std::move(out));
  }
  return layers;
}

}  // namespace pleshard
