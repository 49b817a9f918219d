#include "ckpt/synthetic.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "format/encode.hpp"
#include "kernels/common/ngram_hash.hpp"

namespace pleshard {

namespace {

// body(first, last) over [begin, end) in pieces of rows spread over the machine's cores.
template <typename Body>
void parallel_rows(std::int64_t begin, std::int64_t end, const Body& body) {
  constexpr std::int64_t k_piece = 1024;
  const auto pieces = static_cast<std::size_t>((end - begin + k_piece - 1) / k_piece);
  parallel_for(pieces, host_threads(), 2, [&](std::size_t i) {
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
  // With their synthetic descriptor, so that a tier can generate them in place.
  [[nodiscard]] TableSource table_source(int ple_index) const override {
    return sources_.at(static_cast<std::size_t>(ple_index));
  }

 private:
  std::vector<TableSource> sources_;
};

}  // namespace

std::unique_ptr<PleCheckpoint> synthetic_checkpoint(const ModelConfig& config, RowFormat format, std::uint64_t seed) {
  return std::make_unique<SyntheticCheckpoint>(config, format, seed);
}

float synthetic_value(std::uint64_t seed, int ple_index, std::int64_t row, int column) {
  return kernels::synthetic_value_of(kernels::synthetic_row_key(seed, ple_index, row), column);
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
    info.global_scale = kernels::synthetic_global_scale(format);
    info.multipliers = spec.multipliers;
    info.head_sizes = spec.head_sizes;
    info.head_offsets = spec.head_offsets;
    const TableLayout layout = info.layout;
    const int d = spec.ple_index;
    auto rows = [layout, seed, d](std::int64_t begin, std::int64_t end, std::span<std::uint8_t> out,
                                  std::span<std::uint8_t> scales) {
      // Rows are a function of their index alone, so any split over threads gives the same bytes.
      parallel_rows(begin, end, [&](std::int64_t first, std::int64_t last) {
        for (std::int64_t r = first; r < last; ++r) {
          const auto i = static_cast<std::size_t>(r - begin);
          kernels::synthetic_row(layout.format, layout.head_dim, seed, d, r, out.data() + i * layout.row_bytes(),
                                 scales.data() + i * layout.scale_bytes());
        }
      });
    };
    TableSource source{std::move(info), std::move(rows)};
    source.synthetic = SyntheticRows{seed};
    tables.push_back(std::move(source));
  }
  return tables;
}

std::vector<TableSource> checkpoint_tables(const PleCheckpoint& checkpoint) {
  std::vector<TableSource> tables;
  for (const auto& info : checkpoint.tables()) tables.push_back(checkpoint.table_source(info.ple_index));
  return tables;
}

}  // namespace pleshard
