#pragma once
// Engram's token map (docs/design.md §10): the compressed id that hashing uses for each token,
// cid = map[token], built from the tokenizer and shipped beside the checkpoint as
// engram_token_map.npy (or inside a native HDF5 checkpoint). It decides every row id, so it
// is part of a model's identity: its digest goes into a job's fingerprint and its output.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace pleshard {

class TokenMap {
 public:
  // Reads a .npy map (int32 or int64, shape [vocab_size]) and checks that every id lies in
  // [0, compressed_vocab) and the largest is compressed_vocab - 1. Throws InputError naming
  // the file and what is wrong.
  [[nodiscard]] static TokenMap load(const std::filesystem::path& path, std::int64_t vocab_size,
                                     std::int64_t compressed_vocab);
  // A map held in memory, checked as load() checks a file's; `source` names it in messages.
  [[nodiscard]] static TokenMap from_ids(std::vector<std::int64_t> ids, std::int64_t vocab_size,
                                         std::int64_t compressed_vocab, const std::string& source);
  // cid = token, for a model whose compressed vocab is its vocab and that ships no map.
  [[nodiscard]] static TokenMap identity(std::int64_t vocab_size);

  // For 0 <= token < vocab_size().
  [[nodiscard]] std::int64_t compressed_id(std::int64_t token) const { return ids_[static_cast<std::size_t>(token)]; }
  [[nodiscard]] std::span<const std::int64_t> ids() const { return ids_; }
  [[nodiscard]] std::int64_t vocab_size() const { return static_cast<std::int64_t>(ids_.size()); }
  [[nodiscard]] std::int64_t compressed_vocab() const { return compressed_vocab_; }

  // Where the map came from, for messages: a .npy file, a dataset of a checkpoint, "identity".
  [[nodiscard]] const std::string& source() const { return source_; }
  // The .npy file it was read from; empty where it came from elsewhere.
  [[nodiscard]] const std::filesystem::path& file() const { return file_; }
  // The map's identity: the SHA-256 of its entries as little-endian int64 (64 hex digits),
  // the same whatever holds it (an int32 or int64 .npy, a checkpoint's dataset). In Python:
  // hashlib.sha256(numpy.load(f).astype("<i8").tobytes()).hexdigest().
  [[nodiscard]] const std::string& sha256() const { return sha256_; }

 private:
  TokenMap(std::vector<std::int64_t> ids, std::int64_t compressed_vocab, std::string source);

  std::vector<std::int64_t> ids_;
  std::int64_t compressed_vocab_ = 0;
  std::string source_;
  std::filesystem::path file_;
  std::string sha256_;
};

}  // namespace pleshard
