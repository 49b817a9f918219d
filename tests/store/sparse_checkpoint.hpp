#pragma once
// A safetensors checkpoint of one FP8 or NVFP4 table of any number of rows, crafted as a
// sparse file: the header is written here (not by the library's writer), the file is
// extended to its full size, and only chosen marker rows hold bytes. Each marker row's
// bytes are a function of its index, and its expected decode comes from the reference
// decoders (tests/format/reference_formats.hpp), so a looked-up row names its index.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "format/reference_formats.hpp"
#include "model/model_config.hpp"
#include "model/table_spec.hpp"

namespace pleshard::testing_support {

class SparseCheckpoint {
 public:
  // The checkpoint of PLE index 0 of `config` (FP8 or NVFP4, one table) as
  // <dir>/model.safetensors with config.json beside it; no marker rows yet.
  SparseCheckpoint(const std::filesystem::path& dir, const ModelConfig& config)
      : dir_(dir), spec_(derive_table_spec(config, 0)), nvfp4_(config.quantization == TableQuantization::nvfp4) {
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "config.json") << to_json(config).dump();
    const std::string prefix = "model.language_model.layers." + std::to_string(spec_.decoder_layer - 1) +
                               ".ple.ple_embedding.ngram_embedding.";
    nlohmann::json header = nlohmann::json::object();
    header[prefix + (nvfp4_ ? "weight_scale_2" : "weight_scale")] = {
        {"dtype", "F32"}, {"shape", nlohmann::json::array()}, {"data_offsets", {0, 4}}};
    std::uint64_t at = 4;
    for (std::int64_t first = 0, i = 0; first < rows(); first += spec_.shard_rows, ++i) {
      const std::int64_t count = std::min(spec_.shard_rows, rows() - first);
      const std::string shard = prefix + "shard_" + std::to_string(i);
      Shard s{first, at, 0};
      header[shard + ".weight"] = {{"dtype", nvfp4_ ? "U8" : "F8_E4M3"},
                                   {"shape", {count, row_bytes()}},
                                   {"data_offsets", {at, at + static_cast<std::uint64_t>(count * row_bytes())}}};
      at += static_cast<std::uint64_t>(count * row_bytes());
      if (nvfp4_) {
        s.scales = at;
        header[shard + ".weight_scale"] = {{"dtype", "F8_E4M3"},
                                           {"shape", {count, 1}},
                                           {"data_offsets", {at, at + static_cast<std::uint64_t>(count)}}};
        at += static_cast<std::uint64_t>(count);
      }
      shards_.push_back(s);
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    data_start_ = 8 + text.size();
    bytes_ = data_start_ + at;

    fd_ = ::open(path().c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error(path().string() + ": " + std::strerror(errno));
    std::uint8_t length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<std::uint8_t>(text.size() >> (8 * i));
    put(0, length, 8);
    put(8, text.data(), text.size());
    put(data_start_, &global_scale_, sizeof global_scale_);
    sparse_ = ::ftruncate(fd_, static_cast<off_t>(bytes_)) == 0;
  }
  ~SparseCheckpoint() {
    if (fd_ >= 0) ::close(fd_);
  }
  SparseCheckpoint(const SparseCheckpoint&) = delete;
  SparseCheckpoint& operator=(const SparseCheckpoint&) = delete;

  // False where the file system cannot hold a file of this size (no sparse files).
  [[nodiscard]] bool made() const { return sparse_; }
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  [[nodiscard]] std::filesystem::path path() const { return dir_ / "model.safetensors"; }
  [[nodiscard]] std::int64_t rows() const { return spec_.padded_rows; }
  [[nodiscard]] std::uint64_t file_bytes() const { return bytes_; }
  [[nodiscard]] int head_dim() const { return spec_.head_dim; }

  // Writes marker row `row` (its codes, and for NVFP4 its block scale).
  void mark(std::int64_t row) {
    const Shard& s = shards_.at(static_cast<std::size_t>(row / spec_.shard_rows));
    const auto local = static_cast<std::uint64_t>(row - s.first);
    const std::vector<std::uint8_t> codes = marker_codes(row);
    put(data_start_ + s.codes + local * static_cast<std::uint64_t>(row_bytes()), codes.data(), codes.size());
    if (nvfp4_) {
      const std::uint8_t scale = marker_scale(row);
      put(data_start_ + s.scales + local, &scale, 1);
    }
    marked_.push_back(row);
  }
  [[nodiscard]] bool marked(std::int64_t row) const {
    return std::find(marked_.begin(), marked_.end(), row) != marked_.end();
  }

  // The float32 decode of row `id` as bit patterns: a marker's values, zeros for every
  // other row (holes) and for ids outside the table.
  [[nodiscard]] std::vector<std::uint32_t> expected(std::int64_t id) const {
    std::vector<std::uint32_t> out(static_cast<std::size_t>(head_dim()), 0);
    if (!marked(id)) return out;
    const std::vector<std::uint8_t> codes = marker_codes(id);
    for (int j = 0; j < head_dim(); ++j) {
      const double value = nvfp4_ ? reference::e2m1_value(static_cast<std::uint8_t>(
                                        (codes[static_cast<std::size_t>(j / 2)] >> (4 * (j % 2))) & 0xF)) *
                                        reference::e4m3_value(marker_scale(id))
                                  : reference::e4m3_value(codes[static_cast<std::size_t>(j)]);
      out[static_cast<std::size_t>(j)] = std::bit_cast<std::uint32_t>(static_cast<float>(value * global_scale_));
    }
    return out;
  }

 private:
  struct Shard {
    std::int64_t first;    // the shard's first row
    std::uint64_t codes;   // its weight tensor's data offset
    std::uint64_t scales;  // its weight_scale tensor's data offset (NVFP4)
  };

  [[nodiscard]] std::int64_t row_bytes() const { return nvfp4_ ? spec_.head_dim / 2 : spec_.head_dim; }

  static std::uint64_t mix(std::uint64_t v) {
    v = (v ^ (v >> 31)) * 0x7FB5D329728EA185ull;
    v = (v ^ (v >> 27)) * 0x81DADEF4BC2DD44Dull;
    return v ^ (v >> 33);
  }
  // E4M3 codes other than NaN (S.1111.111), so every decoded value compares.
  static std::uint8_t not_nan(std::uint8_t code) { return (code & 0x7F) == 0x7F ? code ^ 1 : code; }

  [[nodiscard]] std::vector<std::uint8_t> marker_codes(std::int64_t row) const {
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(row_bytes()));
    for (std::size_t j = 0; j < codes.size(); ++j) {
      const auto byte = static_cast<std::uint8_t>(mix(static_cast<std::uint64_t>(row) * 64 + j / 8) >> (8 * (j % 8)));
      codes[j] = nvfp4_ ? byte : not_nan(byte);
    }
    return codes;
  }
  static std::uint8_t marker_scale(std::int64_t row) {
    const std::uint8_t scale = not_nan(static_cast<std::uint8_t>(mix(~static_cast<std::uint64_t>(row)) & 0x7F));
    return scale == 0 ? 0x38 : scale;  // positive and non-zero: the row's values show
  }

  void put(std::uint64_t offset, const void* data, std::size_t n) const {
    if (::pwrite(fd_, data, n, static_cast<off_t>(offset)) != static_cast<ssize_t>(n))
      throw std::runtime_error(path().string() + ": pwrite at " + std::to_string(offset) + " failed");
  }

  std::filesystem::path dir_;
  TableSpec spec_;
  bool nvfp4_;
  float global_scale_ = 0.375f;
  std::vector<Shard> shards_;
  std::uint64_t data_start_ = 0;
  std::uint64_t bytes_ = 0;
  int fd_ = -1;
  bool sparse_ = false;
  std::vector<std::int64_t> marked_;
};

}  // namespace pleshard::testing_support
