#pragma once
// Reading an embedding output (docs/output.md) back: its layers' shapes and dtype, the
// requests' boundaries and ids, and any tokens' rows as stored — bfloat16 stays 16-bit
// words, nothing is converted. pleshard writes each /ple_{d} contiguous, so its rows are read
// straight from the file by threads of pread, at the file system's speed; a dataset stored
// otherwise (a file rewritten by h5repack) is read through HDF5, still unconverted.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "format/row_format.hpp"

namespace pleshard {

// One /ple_{d}: [tokens, width] values of `dtype`.
struct EmbeddingLayerShape {
  std::int64_t tokens = 0;
  std::int64_t width = 0;
  OutDtype dtype = OutDtype::bf16;
  [[nodiscard]] std::size_t token_bytes() const;
};

class EmbeddingReader {
 public:
  // Opens `path`; InputError naming it when it is no embedding output (no /query_start_loc,
  // no /ple_0, a /ple_{d} without its "dtype" or of other values than it says).
  explicit EmbeddingReader(const std::filesystem::path& path);
  ~EmbeddingReader();
  EmbeddingReader(const EmbeddingReader&) = delete;
  EmbeddingReader& operator=(const EmbeddingReader&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] int layers() const { return static_cast<int>(layers_.size()); }
  [[nodiscard]] const EmbeddingLayerShape& layer(int d) const;
  // Request r's tokens are rows [query_start_loc[r], query_start_loc[r + 1]).
  [[nodiscard]] const std::vector<std::int64_t>& query_start_loc() const { return query_start_loc_; }
  // The requests' ids (`run`'s outputs), or nothing (`embed`'s).
  [[nodiscard]] const std::optional<std::vector<std::string>>& request_ids() const { return request_ids_; }

  // Whether layer d's rows are read past HDF5 (read_rows then calls no HDF5 function, so it
  // may run beside other threads' HDF5 calls; HDF5 itself is not thread-safe).
  [[nodiscard]] bool read_past_hdf5(int d) const;
  // Tokens [first, first + out.size() / token bytes) of layer d, as stored, into `out`;
  // InputError naming the file for tokens it does not hold or a file cut short.
  void read_rows(int d, std::int64_t first, std::span<std::uint8_t> out) const;

 private:
  struct Hdf5;
  std::string path_;
  std::unique_ptr<Hdf5> hdf5_;
  std::vector<EmbeddingLayerShape> layers_;
  std::vector<std::optional<std::uint64_t>> offsets_;  // each contiguous layer's first byte in the file
  std::vector<std::int64_t> query_start_loc_;
  std::optional<std::vector<std::string>> request_ids_;
};

// A whole embedding file in memory.
struct EmbeddingFile {
  std::vector<std::int64_t> query_start_loc;
  std::vector<std::string> request_ids;
  std::vector<std::vector<std::uint8_t>> layers;  // raw values per layer
};

// Reads a whole embedding file of `layers` layers of `dtype`; InputError naming it when it
// holds fewer layers or another dtype.
[[nodiscard]] EmbeddingFile read_embeddings_h5(const std::filesystem::path& path, int layers, OutDtype dtype);

}  // namespace pleshard
