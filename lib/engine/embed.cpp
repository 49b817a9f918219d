#include "engine/embed.hpp"

#include "hash/ngram_ids.hpp"
#include "store/host_table.hpp"

namespace pleshard {

std::vector<LayerEmbeddings> embed_batch(const ModelConfig& config, const PleCheckpoint& checkpoint,
                                         const TokenBatch& batch, OutDtype dtype) {
  std::vector<LayerEmbeddings> layers;
  for (const auto& derived : derive_layer_specs(config)) {
    const PleTableInfo& info = checkpoint.table(derived.ple_index);
    const PleLayerSpec spec = hashing_spec(derived, info, checkpoint.path());
    const std::vector<std::int64_t> ids = compute_ngram_ids(spec, batch);
    const HostTable table(checkpoint, derived.ple_index, {0, info.layout.rows});
    LayerEmbeddings out;
    out.ple_index = derived.ple_index;
    out.data.resize(ids.size() * static_cast<std::size_t>(info.layout.head_dim) * kernels::out_bytes(dtype));
    table.lookup(ids, dtype, out.data.data());
    layers.push_back(std::move(out));
  }
  return layers;
}

}  // namespace pleshard
