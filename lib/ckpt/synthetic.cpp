#include "ckpt/synthetic.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "format/encode.hpp"
#include "kernels/common/ngram_hash.hpp"

namespace pleshard {

namespace {

std::uint64_t row_key(std::uint64_t seed, int ple_index, std::int64_t row) {
  using kernels::splitmix64;
  return splitmix64(splitmix64(seed ^ (static_cast<std::uint64_t>(ple_index) << 48)) + static_cast<std::uint64_t>(row));
}

float value_of(std::uint64_t key, int column) {
  const std::uint64_t bits = kernels::splitmix64(key + static_cast<std::uint64_t>(column));
  const auto sum =
      static_cast<float>((bits & 0xFFFF) + ((bits >> 16) & 0xFFFF) + ((bits >> 32) & 0xFFFF) + (bits >> 48));
  // sum / 65536 is in [0, 4); centred and scaled into (-amax, amax].
  return (2.0f - sum * (1.0f / 65536.0f)) * (k_synthetic_amax / 2.0f);
}

// body(first, last) over [begin, end) in pieces of rows spread over the machine's cores.
template <typename Body>
void parallel_rows(std::int64_t begin, std::int64_t end, const Body& body) {
  constexpr std::int64_t k_piece = 1024;
  const auto pieces = static_cast<std::size_t>((end - begin + k_piece - 1) / k_piece);
  parallel_for(pieces, host_cores(), 2, [&](std::size_t i) {
    const std::int64_t first = begin + static_cast<std::int64_t>(i) * k_piece;
    body(first, std::min(end, first + k_piece));
  });
}

class SyntheticCheckpoint final : public PleCheckpoint {
 public:
  SyntheticCheckpoint(const ModelConfig& config, RowFormat format, std::uint64_t seed)
      : sources_(synthetic_tables(config, format, seed)) {
    path_ = "synthetic(" + config.source + ", " + to_string(format) + ", seed " + std::to_string(seed) + ")";
    for (const auto& s : sources_) tables_.push_back(s.info);
  }
  [[nodiscard]] CheckpointKind kind() const override { return CheckpointKind::synthetic; }
  void read_rows(int ple_index, std::int64_t begin, std::int64_t end, std::span<std::uint8_t> rows,
                 std::span<std::uint8_t> scales) const override {
    sources_.at(static_cast<std::size_t>(ple_index)).rows(begin, end, rows, scales);
  }

 private:
  std::vector<TableSource> sources_;
};

}  // namespace

std::unique_ptr<PleCheckpoint> synthetic_checkpoint(const ModelConfig& config, RowFormat format, std::uint64_t seed) {
  return std::make_unique<SyntheticCheckpoint>(config, format, seed);
}

float synthetic_value(std::uint64_t seed, int ple_index, std::int64_t row, int column) {
  return value_of(row_key(seed, ple_index, row), column);
}

RowFormat default_format(const ModelConfig& config) {
  switch (config.quantization) {
    case TableQuantization::fp8:
      return RowFormat::fp8;
    case TableQuantization::nvfp4:
      return RowFormat::nvfp4;
    case TableQuantization::none:
      return RowFormat::bf16;
  }
  return RowFormat::bf16;
}

std::vector<TableSource> synthetic_tables(const ModelConfig& config, RowFormat format, std::uint64_t seed) {
  if (!format_matches_config(format, config.quantization))
    throw InputError(config.source + ": ple_embedding_dtype = " + to_string(config.quantization) +
                     " cannot be stored as " + to_string(format));
  std::vector<TableSource> tables;
  for (const auto& spec : derive_layer_specs(config)) {
    PleTableInfo info;
    info.ple_index = spec.ple_index;
    info.decoder_layer = spec.decoder_layer;
    info.layout = {format, spec.head_dim, spec.padded_rows};
    info.global_scale = format == RowFormat::fp8     ? fp8_global_scale(k_synthetic_amax)
                        : format == RowFormat::nvfp4 ? nvfp4_global_scale(k_synthetic_amax)
                                                     : 1.0f;
    info.multipliers = spec.multipliers;
    info.head_sizes = spec.head_sizes;
    info.head_offsets = spec.head_offsets;
    const TableLayout layout = info.layout;
    const float global = info.global_scale;
    const int d = spec.ple_index;
    auto rows = [layout, global, seed, d](std::int64_t begin, std::int64_t end, std::span<std::uint8_t> out,
                                          std::span<std::uint8_t> scales) {
      // Rows are a function of their index alone, so any split over threads gives the same bytes.
      parallel_rows(begin, end, [&](std::int64_t first, std::int64_t last) {
        std::vector<float> values(static_cast<std::size_t>(layout.head_dim));
        for (std::int64_t r = first; r < last; ++r) {
          const std::uint64_t key = row_key(seed, d, r);
          for (int j = 0; j < layout.head_dim; ++j) values[static_cast<std::size_t>(j)] = value_of(key, j);
          const auto i = static_cast<std::size_t>(r - begin);
          encode_row(layout.format, values, global, out.subspan(i * layout.row_bytes(), layout.row_bytes()),
                     scales.subspan(i * layout.scale_bytes(), layout.scale_bytes()));
        }
      });
    };
    tables.push_back({std::move(info), std::move(rows)});
  }
  return tables;
}

std::vector<TableSource> checkpoint_tables(const PleCheckpoint& checkpoint) {
  std::vector<TableSource> tables;
  for (const auto& info : checkpoint.tables()) {
    const int d = info.ple_index;
    tables.push_back({info, [&checkpoint, d](std::int64_t begin, std::int64_t end, std::span<std::uint8_t> rows,
                                             std::span<std::uint8_t> scales) {
                        checkpoint.read_rows(d, begin, end, rows, scales);
                      }});
  }
  return tables;
}

}  // namespace pleshard
