#include "engine/embed.hpp"

#include <algorithm>

#include "engine/ple_engine.hpp"

namespace pleshard {

std::vector<std::uint8_t> to_host(StepSpace& space, const EmbeddingView& view) {
  std::vector<std::uint8_t> host(view.bytes());
  space.copy_to_host(host.data(), view.data, host.size());
  return host;
}

std::vector<LayerEmbeddings> embed_batch(const ModelConfig& config, const PleCheckpoint& checkpoint,
                                         const TokenBatch& batch, OutDtype dtype, StorageTier tier) {
  // One process, one step of the whole batch.
  const Communicators comms(MPI_COMM_SELF, make_topology(1, 0, 1, 1));
  EngineOptions options;
  options.dtype = dtype;
  options.tier = tier;
  options.max_tokens = std::max<std::int64_t>(1, batch.num_tokens());
  PleEngine engine(comms, config, checkpoint, options);
  const StepOutput out = engine.forward(batch);
  engine.wait();
  std::vector<LayerEmbeddings> layers;
  for (std::size_t d = 0; d < out.layers.size(); ++d)
    layers.push_back({static_cast<int>(d), to_host(engine.space(), out.layers[d])});
  return layers;
}

}  // namespace pleshard
