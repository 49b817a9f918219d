#pragma once
// Embedding outputs in HDF5: one dataset /ple_{d} [tokens, ple_embed_dim] per PLE index
// (IEEE float32, or 16-bit floats described to HDF5 as float16 / bfloat16 so readers can
// convert them), /query_start_loc, and an attribute "dtype". The file gets its name only
// once complete.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "format/row_format.hpp"

namespace pleshard {

struct LayerEmbeddings {
  int ple_index = 0;
  std::vector<std::uint8_t> data;  // tokens * ple_embed_dim values of the output dtype
};

void write_embeddings_h5(const std::filesystem::path& path, std::span<const std::int64_t> query_start_loc,
                         const std::vector<LayerEmbeddings>& layers, std::int64_t ple_embed_dim,
                         OutDtype dtype);

}  // namespace pleshard
