#pragma once
// Embedding outputs in HDF5: one dataset /ple_{d} [tokens, ple_embed_dim] per PLE index
// (IEEE float32, or 16-bit floats described to HDF5 as float16 / bfloat16 so readers can
// convert them, with an attribute "dtype"), /query_start_loc, and optionally
// /request_ids. Written as <path>.partial and renamed when complete, without timestamps,
// so equal contents give equal bytes.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "format/row_format.hpp"
#include <memory>

namespace pleshard {

struct LayerEmbeddings {
  int ple_index = 0;
  std::vector<std::uint8_t> data;  // tokens * ple_embed_dim values of the output dtype
};

// Writes one embedding file. With a communicator of several ranks and parallel HDF5, every
// rank of it opens the file together (MPI-IO) and writes its own token rows; otherwise one
// process writes everything.
class EmbeddingWriter {
 public:
  // Creates every dataset (collective over `comm`); `query_start_loc` gives the token count.
  EmbeddingWriter(const std::filesystem::path& path, std::span<const std::int64_t> query_start_loc,
                  std::span<const std::string> request_ids, int layers, std::int64_t ple_embed_dim,
                  OutDtype dtype, MPI_Comm comm = MPI_COMM_SELF);
  // Writes tokens [first, first + bytes / token bytes) of layer d (independent I/O).
  void write(int layer, std::int64_t first, std::span<const std::uint8_t> bytes);
  // Closes (collective) and renames to the final path.
  void finish();

  // Whether writers on `comm` share one file through MPI-IO (parallel HDF5, several ranks).
  [[nodiscard]] static bool parallel(MPI_Comm comm);
  ~EmbeddingWriter();

 private:
  struct Handles;  // HDF5 stays out of this header
  std::filesystem::path path_;
  std::filesystem::path partial_;
  std::size_t token_bytes_;
  MPI_Comm comm_;
  std::unique_ptr<Handles> h5_;
};

void write_embeddings_h5(const std::filesystem::path& path, std::span<const std::int64_t> query_start_loc,
                         const std::vector<LayerEmbeddings>& layers, std::int64_t ple_embed_dim,
                         OutDtype dtype);

struct EmbeddingFile {
  std::vector<std::int64_t> query_start_loc;
  std::vector<std::string> request_ids;
  std::vector<std::vector<std::uint8_t>> layers;  // raw values per layer
};

// Reads a whole file written by EmbeddingWriter (for assembling parts).
[[nodiscard]] EmbeddingFile read_embeddings_h5(const std::filesystem::path& path, int layers,
                                               OutDtype dtype);

}  // namespace pleshard
