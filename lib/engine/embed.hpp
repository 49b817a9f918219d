#pragma once
// Single-process embeddings: hash a batch for every PLE layer (checkpoint hash buffers
// taking precedence) and look the rows up in the chosen storage tier.

#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "hash/token_batch.hpp"
#include "io/embedding_output.hpp"
#include "store/storage_tier.hpp"

namespace pleshard {

// One LayerEmbeddings per PLE index: [tokens, ple_embed_dim] of `dtype`, token t's head h
// occupying values [h * head_dim, (h + 1) * head_dim).
[[nodiscard]] std::vector<LayerEmbeddings> embed_batch(const ModelConfig& config,
                                                       const PleCheckpoint& checkpoint,
                                                       const TokenBatch& batch, OutDtype dtype,
                                                       StorageTier tier = StorageTier::host);

}  // namespace pleshard
