#include "ckpt/synthetic.hpp"
#include "core/band_pipeline.hpp"

#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "format/encode.hpp"
#include "kernels/common/ngram_hash.hpp"
#include "kernels/gpu_device.hpp"

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
      : sources_(synthetic_tables(config, format, seed)), seed_(seed) {
    path_ = "synthetic(" + config.source + ", " + to_string(format) + ", seed " + std::to_string(seed) + ")";
    for (const auto& s : sources_) tables_.push_back(s.info);
  }
  [[nodiscard]] CheckpointKind kind() const override { return CheckpointKind::synthetic; }
  void read_rows(int ple_index, std::int64_t begin, std::int64_t end, std::span<std::uint8_t> rows,
                 std::span<std::uint8_t> scales) const override {
    sources_.at(static_cast<std::size_t>(ple_index)).rows(begin, end, rows, scales);
  }
  // No files: the tables and the seed that makes their rows.
  [[nodiscard]] std::uint64_t content_identity() const override {
    return kernels::splitmix64(PleCheckpoint::content_identity() ^ seed_);
  }
  // With their synthetic descriptor, so that a tier can generate them in place.
  [[nodiscard]] TableSource table_source(int ple_index) const override {
    return sources_.at(static_cast<std::size_t>(ple_index));
  }

 private:
  std::vector<TableSource> sources_;
  std::uint64_t seed_;
};

}  // namespace

std::unique_ptr<PleCheckpoint> synthetic_checkpoint(const ModelConfig& config, RowFormat format, std::uint64_t seed) {
  return std::make_unique<SyntheticCheckpoint>(config, format, seed);
}

float synthetic_value(std::uint64_t seed, int ple_index, std::int64_t row, int column) {
  return kernels::synthetic_value_of(kernels::synthetic_row_key(seed, ple_index, row), column);
}

RowFormat default_format(const ModelConfig& config) { return default_row_format(config.quantization); }

std::vector<TableSource> synthetic_tables(const ModelConfig& config, RowFormat format, std::uint64_t seed,
                                          RowMaker maker) {
  if (!format_matches_config(format, config.quantization))
    throw InputError(config.source + ": ple_embedding_dtype = " + to_string(config.quantization) +
                     " cannot be stored as " + to_string(format));
  std::vector<TableSource> tables;
  for (const auto& spec : derive_table_specs(config)) {
    PleTableInfo info;
    info.ple_index = spec.ple_index;
    info.decoder_layer = spec.decoder_layer;
    info.layout = {format, spec.head_dim, spec.padded_rows};
    if (!info.layout.whole_blocks())
      throw InputError(config.source + ": head_dim " + std::to_string(spec.head_dim) + " cannot be stored as " +
                       to_string(format) + " (blocks of " + std::to_string(kernels::block_scaling(format).block) +
                       " values)");
    info.global_scale = kernels::synthetic_global_scale(format);
    info.multipliers = spec.multipliers;
    info.head_sizes = spec.head_sizes;
    info.head_offsets = spec.head_offsets;
    const TableLayout layout = info.layout;
    const int d = spec.ple_index;
    RowSource rows = [layout, seed, d](std::int64_t begin, std::int64_t end, std::span<std::uint8_t> out,
                                       std::span<std::uint8_t> scales) {
      // Rows are a function of their index alone, so any split over threads gives the same bytes.
      // A row's codes and block scales are made together: an empty span (codes or scales
      // alone, as the disk tier reads them) takes its part in a row of scratch.
      parallel_rows(begin, end, [&](std::int64_t first, std::int64_t last) {
        std::vector<std::uint8_t> spare_row(out.empty() ? layout.row_bytes() : 0);
        std::vector<std::uint8_t> spare_scales(scales.empty() ? layout.scale_bytes() : 0);
        for (std::int64_t r = first; r < last; ++r) {
          const auto i = static_cast<std::size_t>(r - begin);
          kernels::synthetic_row(layout.format, layout.head_dim, seed, d, r,
                                 out.empty() ? spare_row.data() : out.data() + i * layout.row_bytes(),
                                 scales.empty() ? spare_scales.data() : scales.data() + i * layout.scale_bytes());
        }
      });
    };
    // (Formats without device code, registered ones, are made on the host.)
    if (maker == RowMaker::gpu_if_present && describe(format).device_kernels && kernels::gpu_count() > 0) {
      // Rows made on the GPU are the host's bytes (kernels/common/synthetic_rows.hpp, compiled
      // without contracted multiply-adds); where one is present, ckpt make is bound by the
      // disk, not by the cores. One maker per table, used by one thread at a time (a writer's
      // bands come in order).
      try {
        rows = kernels::gpu_synthetic_rows({layout.format, layout.head_dim, layout.row_bytes(), layout.scale_bytes(),
                                            items_per_band(layout.bytes_per_row())},
                                           seed, d);
      } catch (const SystemError& e) {
        throw SystemError(std::string(e.what()) + " (making rows on the GPU; --cpu makes them on the host's cores)");
      }
    }
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
