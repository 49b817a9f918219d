#include "model/token_map.hpp"

#include <algorithm>
#include <bit>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "core/sha256.hpp"
#include "io/file_checks.hpp"
#include "io/npy_array.hpp"

namespace pleshard {

TokenMap::TokenMap(std::vector<std::int64_t> ids, std::int64_t compressed_vocab, std::string source)
    : ids_(std::move(ids)), compressed_vocab_(compressed_vocab), source_(std::move(source)) {
  static_assert(std::endian::native == std::endian::little, "the digest hashes entries as little-endian int64");
  sha256_ = Sha256().add({reinterpret_cast<const std::uint8_t*>(ids_.data()), ids_.size() * sizeof(ids_[0])}).hex();
}

TokenMap TokenMap::load(const std::filesystem::path& path, std::int64_t vocab_size, std::int64_t compressed_vocab) {
  require_regular_file(path, "token map");
  TokenMap map = from_ids(read_npy_integers(path), vocab_size, compressed_vocab, path.string());
  map.file_ = path;
  return map;
}

TokenMap TokenMap::from_ids(std::vector<std::int64_t> ids, std::int64_t vocab_size, std::int64_t compressed_vocab,
                            const std::string& source) {
  const std::string where = source + ": ";
  if (static_cast<std::int64_t>(ids.size()) != vocab_size)
    throw InputError(where + "token map has " + std::to_string(ids.size()) + " entries, vocab_size is " +
                     std::to_string(vocab_size));
  const auto outside =
      std::find_if(ids.begin(), ids.end(), [&](std::int64_t id) { return id < 0 || id >= compressed_vocab; });
  if (outside != ids.end())
    throw InputError(where + "token map entry " + std::to_string(outside - ids.begin()) + " is " +
                     std::to_string(*outside) +
                     ", not in [0, engram_compressed_vocab_size = " + std::to_string(compressed_vocab) + ")");
  // Every id in range and the largest C - 1: the map uses the whole compressed vocab's range.
  const std::int64_t largest = ids.empty() ? -1 : *std::max_element(ids.begin(), ids.end());
  if (largest + 1 != compressed_vocab)
    throw InputError(where + "token map's largest id is " + std::to_string(largest) +
                     ", expected engram_compressed_vocab_size - 1 = " + std::to_string(compressed_vocab - 1));
  return TokenMap(std::move(ids), compressed_vocab, source);
}

TokenMap TokenMap::identity(std::int64_t vocab_size) {
  if (vocab_size < 1)
    throw InputError("vocab_size = " + std::to_string(vocab_size) + " must be at least 1 for an identity token map");
  std::vector<std::int64_t> ids(static_cast<std::size_t>(vocab_size));
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  return TokenMap(std::move(ids), vocab_size, "identity");
}

}  // namespace pleshard
