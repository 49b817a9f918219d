#pragma once
// Single-process embeddings: one engine step of a whole batch on this process alone
// (checkpoint hash buffers taking precedence), in the chosen storage tier, copied to the
// host.

#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "engine/exchange.hpp"
#include "format/embedding_output.hpp"
#include "hash/token_batch.hpp"
#include "store/storage_tier.hpp"

namespace pleshard {

// A step's embeddings of one layer, copied to the host (waits for the space's stream).
[[nodiscard]] std::vector<std::uint8_t> to_host(StepSpace& space, const EmbeddingView& view);

// One LayerEmbeddings per PLE index: [tokens, ple_embed_dim] of `dtype`, token t's head h
// occupying values [h * head_dim, (h + 1) * head_dim).
[[nodiscard]] std::vector<LayerEmbeddings> embed_batch(const ModelConfig& config, const PleCheckpoint& checkpoint,
                                                       const TokenBatch& batch, OutDtype dtype,
                                                       StorageTier tier = StorageTier::host);

}  // namespace pleshard
