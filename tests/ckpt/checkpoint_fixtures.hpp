#pragma once
// Small configs, scratch directories and raw safetensors editing for checkpoint tests.

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ckpt/safetensors.hpp"
#include "model/model_config.hpp"

namespace pleshard::testing_support {

inline ModelConfig small_config(const char* dtype = nullptr, std::int64_t parts = 7) {
  nlohmann::json j = {
      {"vocab_size", 1000},     {"eos_token_id", 2},    {"num_hidden_layers", 4},       {"ngram_size", 3},
      {"heads_per_ngram", 2},   {"ple_embed_dim", 128}, {"ngram_vocab_size_base", 500}, {"split_ngram_parts", parts},
      {"ple_layer_ids", {1, 3}}};
  if (dtype != nullptr) j["ple_embedding_dtype"] = dtype;
  return parse_model_config(j, "small config");
}

// A small DeepSeek Engram config: two tables (decoder layers 1 and 3, 0-based) of 3-grams,
// 2 heads per order, 64 values per row, a dead token 999. With `compressed` < 1000, tokens
// hash through a token map onto `compressed` ids (token mod compressed: every id taken).
inline ModelConfig engram_config(std::int64_t compressed = 1000) {
  nlohmann::json j = {
      {"vocab_size", 1000},         {"image_token_id", 999},    {"engram_layer_ids", {1, 3}},
      {"engram_max_ngram_size", 3}, {"engram_n_heads", 2},      {"engram_head_dim", 64},
      {"engram_vocab_size", 3000},  {"engram_pad_token_id", 2}, {"engram_compressed_vocab_size", compressed}};
  ModelConfig config = parse_model_config(j, "engram config");
  if (compressed != 1000) {
    std::vector<std::int64_t> ids(1000);
    for (std::size_t t = 0; t < ids.size(); ++t) ids[t] = static_cast<std::int64_t>(t) % compressed;
    config.token_map = std::make_shared<const TokenMap>(TokenMap::from_ids(ids, 1000, compressed, "test token map"));
  }
  return config;
}

// A fresh directory per test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() / (std::string("pleshard_") + info->test_suite_name() + "_" +
                                                      info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// The tensors of a safetensors file as plain values, to edit and write back.
struct RawTensor {
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;
  bool operator==(const RawTensor&) const = default;
};
using RawTensors = std::map<std::string, RawTensor>;

inline RawTensors read_raw(const std::filesystem::path& path) {
  const SafetensorsFile file(path);
  RawTensors out;
  for (const auto& t : file.tensors()) {
    const auto data = file.data(t);
    out[t.name] = {to_string(t.dtype), t.shape, {data.begin(), data.end()}};
  }
  return out;
}

// Writes tensors contiguously in name order; `edit` may change the header afterwards.
inline void write_raw(const std::filesystem::path& path, const RawTensors& tensors,
                      const std::function<void(nlohmann::json&)>& edit = {}, std::size_t extra_bytes = 0) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const auto& [name, t] : tensors) {
    header[name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
    data.append(t.bytes.begin(), t.bytes.end());
  }
  if (edit) edit(header);
  data.append(extra_bytes, '\0');
  const std::string text = header.dump();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>(n >> (8 * i)));
  out << text << data;
}

}  // namespace pleshard::testing_support

#include <mpi.h>

namespace pleshard::testing_support {

// A scratch directory made by rank 0 with a unique name and shared with every rank, so
// concurrent runs of the same test never meet; removed when it goes out of scope.
class SharedScratchDir {
 public:
  explicit SharedScratchDir(const std::string& stem) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    std::string path;
    if (rank_ == 0) {
      std::string pattern = (std::filesystem::temp_directory_path() / (stem + "_XXXXXX")).string();
      if (::mkdtemp(pattern.data()) != nullptr) path = pattern;
    }
    int length = static_cast<int>(path.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
    path.resize(static_cast<std::size_t>(length));
    MPI_Bcast(path.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = path;
  }
  ~SharedScratchDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank_ == 0) std::filesystem::remove_all(path_);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  int rank_ = 0;
  std::filesystem::path path_;
};

}  // namespace pleshard::testing_support
