#pragma once
// Embedding outputs in HDF5 (docs/output.md): one dataset /ple_{d} [tokens, ple_embed_dim]
// per PLE index (IEEE float32, or 16-bit floats described to HDF5 as float16 / bfloat16 so
// readers can convert them, with an attribute "dtype"), /query_start_loc, and optionally
// /request_ids; attributes that say what the rows are and what made them; no timestamps,
// so equal contents give equal bytes.
//
// A file is made in two steps. create_embedding_file() writes the HDF5 structure with room
// for every row — contiguous datasets allocated at creation — and returns where each
// layer's rows start in the file. Then any number of processes write their rows straight
// into those bytes (EmbeddingRows, pwrite), without HDF5, so a distributed job writes its
// output in place, in any order, with serial or parallel HDF5 alike.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "format/row_format.hpp"

namespace pleshard {

struct LayerEmbeddings {
  int ple_index = 0;
  std::vector<std::uint8_t> data;  // tokens * ple_embed_dim values of the output dtype
};

// An attribute of an output's root or of one of its datasets: text or a whole number.
struct OutputAttribute {
  std::string name;
  std::variant<std::string, std::int64_t> value;
};

// What an output's rows are and what made them: attributes of the file's root, and of each
// /ple_{d} beside its "dtype" (one list per layer, or none). Nothing in them may depend on
// the layout or the run (ranks, times), so that every layout and every resume of a job
// writes the same bytes.
struct OutputDescription {
  std::vector<OutputAttribute> file;
  std::vector<std::vector<OutputAttribute>> layers;
};

struct EmbeddingFileSpec {
  std::span<const std::int64_t> query_start_loc;  // its last entry is the token count
  std::span<const std::string> request_ids;       // empty: no /request_ids
  int layers = 0;
  std::int64_t width = 0;  // ple_embed_dim
  OutDtype dtype = OutDtype::bf16;
  std::string job;  // what made the file (a batch job's fingerprint), as attribute "job"; may be empty
  OutputDescription description;

  [[nodiscard]] std::uint64_t row_bytes() const;  // every layer's rows, the file's bulk
};

// The "job" attribute of an embedding file ("" when it has none); InputError naming the file
// when it is no HDF5 file.
[[nodiscard]] std::string embedding_file_job(const std::filesystem::path& path);

// The names among `expected` whose root attribute in the file at `path` is missing or has
// another value (what tells two jobs' outputs apart); empty where the file cannot be read.
[[nodiscard]] std::vector<std::string> differing_attributes(const std::filesystem::path& path,
                                                            const std::vector<OutputAttribute>& expected);

// Creates `path` (replacing it) holding everything but the rows; returns each layer's first
// row's byte offset in the file.
[[nodiscard]] std::vector<std::uint64_t> create_embedding_file(const std::filesystem::path& path,
                                                               const EmbeddingFileSpec& spec);

// The offsets create_embedding_file returned, read back from such a file (to resume
// writing it); InputError naming the file when it is not one of `layers` layers.
[[nodiscard]] std::vector<std::uint64_t> embedding_file_offsets(const std::filesystem::path& path, int layers);

// Rows written into a file made by create_embedding_file.
class EmbeddingRows {
 public:
  EmbeddingRows(const std::filesystem::path& path, std::vector<std::uint64_t> layer_offsets, std::size_t token_bytes);
  ~EmbeddingRows();
  EmbeddingRows(const EmbeddingRows&) = delete;
  EmbeddingRows& operator=(const EmbeddingRows&) = delete;

  // Tokens [first, first + bytes / token bytes) of layer d. A failed write (a full disk) is a
  // SystemError naming the file.
  void write(int layer, std::int64_t first, std::span<const std::uint8_t> bytes);
  // Returns when every row written so far is on the disk.
  void sync();
  [[nodiscard]] std::uint64_t bytes_written() const { return bytes_written_; }

 private:
  std::string path_;
  std::vector<std::uint64_t> offsets_;
  std::size_t token_bytes_;
  int fd_ = -1;
  std::uint64_t bytes_written_ = 0;
};

// A whole file from one process: written as <path>.partial and renamed when complete.
void write_embeddings_h5(const std::filesystem::path& path, std::span<const std::int64_t> query_start_loc,
                         const std::vector<LayerEmbeddings>& layers, std::int64_t ple_embed_dim, OutDtype dtype,
                         const OutputDescription& description = {});

// Reading them back: format/embedding_reader.hpp.

}  // namespace pleshard
