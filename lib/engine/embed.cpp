#include "engine/embed.hpp"

#include "core/error.hpp"

#include "ckpt/synthetic.hpp"
#include "hash/ngram_ids.hpp"
#include "store/host_table.hpp"
#if PLESHARD_HAVE_CUDA
#include "kernels/cuda/device.hpp"
#include "store/gpu_table.hpp"
#endif

namespace pleshard {

namespace {

// Looks `ids` up in table `d` of the checkpoint, held in `tier` for the duration.
void lookup(const PleCheckpoint& checkpoint, int d, StorageTier tier, const std::vector<std::int64_t>& ids,
            OutDtype dtype, std::vector<std::uint8_t>& out) {
  const RowRange all{0, checkpoint.table(d).layout.rows};
  if (tier == StorageTier::host) {
    HostTable(checkpoint, d, all).lookup(ids, dtype, out.data());
    return;
  }
#if PLESHARD_HAVE_CUDA
  const GpuTable table(checkpoint_tables(checkpoint)[static_cast<std::size_t>(d)], all, tier);
  kernels::DeviceBuffer<std::int64_t> d_ids(ids.size());
  kernels::DeviceBuffer<std::uint8_t> d_out(out.size());
  d_ids.copy_from_host(std::span<const std::int64_t>(ids));
  table.lookup(d_ids.data(), static_cast<std::int64_t>(ids.size()), dtype, d_out.data(), nullptr);
  d_out.copy_to_host(std::span<std::uint8_t>(out));
  PLESHARD_CUDA_CHECK(cudaStreamSynchronize(nullptr));
#else
  throw InputError(std::string("--storage ") + to_string(tier) + ": needs a CUDA build");
#endif
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
