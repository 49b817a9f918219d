#pragma once
// Synthetic PLE tables of any size, generated row by row (so writing them needs bounded
// memory) and reproducible from (seed, PLE index, row, column) alone.

#include <cstdint>
#include <memory>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "kernels/common/synthetic_rows.hpp"

namespace pleshard {

using kernels::k_synthetic_amax;  // kernels/common/synthetic_rows.hpp holds the values' definition

[[nodiscard]] float synthetic_value(std::uint64_t seed, int ple_index, std::int64_t row, int column);

// Where a synthetic table's rows are made when a reader asks for them: on the host's cores,
// or on the GPU where one is present (the same bytes; ckpt make).
enum class RowMaker { host, gpu_if_present };

// The seed of `ckpt make` when none is given, and of --checkpoint synthetic.
inline constexpr std::uint64_t k_default_synthetic_seed = 1;

// One TableSource per PLE layer of `config`, stored as `format` (which must match the
// config's ple_embedding_dtype), with the derived hash buffers.
[[nodiscard]] std::vector<TableSource> synthetic_tables(const ModelConfig& config, RowFormat format, std::uint64_t seed,
                                                        RowMaker maker = RowMaker::host);

// A checkpoint of synthetic_tables: no file; rows are generated when read, on every core,
// with the same values whatever the core count.
[[nodiscard]] std::unique_ptr<PleCheckpoint> synthetic_checkpoint(const ModelConfig& config, RowFormat format,
                                                                  std::uint64_t seed);

// TableSources that read an open checkpoint (for conversion): bytes are copied, never
// re-encoded.
[[nodiscard]] std::vector<TableSource> checkpoint_tables(const PleCheckpoint& checkpoint);

// The format a config implies when none is asked for: its quantization, else bf16.
[[nodiscard]] RowFormat default_format(const ModelConfig& config);

}  // namespace pleshard
