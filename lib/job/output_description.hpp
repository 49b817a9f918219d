#pragma once
// The attributes that make an embedding output describe itself (docs/output.md): each
// /ple_{d} its PLE index, decoder layer (the config's id) and that id's base, model family,
// row width and heads; the file its model config, the checkpoint's content identity, the
// requests and their digest, the options that shaped the bytes, and the version of pleshard
// that wrote it. Nothing in them depends on the layout or the run, so every layout and every
// resume writes the same bytes.

#include <cstdint>
#include <string>

#include "format/embedding_output.hpp"
#include "format/row_format.hpp"
#include "model/model_config.hpp"

namespace pleshard {

struct OutputSource {
  std::string writer;                     // "pleshard run", "pleshard embed"
  std::uint64_t checkpoint_identity = 0;  // PleCheckpoint::content_identity()
  std::string requests;                   // the request (or batch) file as named, or how synthetic ones were made
  std::string requests_sha256;            // of that file's bytes; empty for synthetic requests
  std::int64_t part_tokens = 0;           // --part-tokens; 0: written in one piece
};

[[nodiscard]] OutputDescription describe_output(const ModelConfig& config, OutDtype dtype, const OutputSource& source);

// A 64-bit identity as the outputs and progress records write it: 16 hex digits.
[[nodiscard]] std::string identity_hex(std::uint64_t identity);

}  // namespace pleshard
