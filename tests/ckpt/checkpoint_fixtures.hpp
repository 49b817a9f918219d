#pragma once
// Small configs, scratch directories and raw safetensors editing for checkpoint tests.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ckpt/safetensors.hpp"
#include "config/model_config.hpp"

namespace pleshard::testing_support {

inline ModelConfig small_config(const char* dtype = nullptr, std::int64_t parts = 7) {
  nlohmann::json j = {{"vocab_size", 1000},          {"eos_token_id", 2},
                      {"num_hidden_layers", 4},      {"ngram_size", 3},
                      {"heads_per_ngram", 2},        {"ple_embed_dim", 128},
                      {"ngram_vocab_size_base", 500}, {"split_ngram_parts", parts},
                      {"ple_layer_ids", {1, 3}}};
  if (dtype != nullptr) j["ple_embedding_dtype"] = dtype;
  return parse_model_config(j, "small config");
}

// A fresh directory per test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (std::string("pleshard_") + info->test_suite_name() + "_" + info->name() + "_" +
             std::to_string(::getpid()));
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
                      const std::function<void(nlohmann::json&)>& edit = {},
                      std::size_t extra_bytes = 0) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const auto& [name, t] : tensors) {
    header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
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
