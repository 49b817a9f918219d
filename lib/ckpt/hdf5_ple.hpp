#pragma once
// pleshard's native HDF5 checkpoint (docs/design.md §4): the config JSON as a file attribute;
// per PLE index d a group /ple/{d} with `weight` [padded_rows, row_bytes] (u8, chunked in
// row bands, Fletcher32), `weight_scale` [padded_rows, scale_row_bytes] for block-scaled
// formats (nvfp4: head_dim/16 E4M3 bytes, fp8_e8m0: head_dim/32 E8M0 bytes), `global_scale`
// (read for fp8 and nvfp4; 1 for the others), the three hash buffers, and attributes format,
// head_dim, decoder_layer; /engram_token_map, the token map of a family that hashes through one.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"

namespace pleshard::detail {

[[nodiscard]] std::unique_ptr<PleCheckpoint> open_hdf5_checkpoint(const std::filesystem::path& path,
                                                                  const ModelConfig& config,
                                                                  const CheckpointOptions& options);

// The config JSON stored in a native checkpoint.
[[nodiscard]] ModelConfig read_hdf5_config(const std::filesystem::path& path);

// The token map a native checkpoint carries (the int64 dataset /engram_token_map, written
// where its config hashes through one), unchecked; none where it holds none.
inline constexpr const char* k_token_map_dataset = "engram_token_map";
[[nodiscard]] std::optional<std::vector<std::int64_t>> read_hdf5_token_map(const std::filesystem::path& path);

// Writes a native checkpoint table by table in row bands (bounded memory).
void write_hdf5_checkpoint(const std::filesystem::path& path, const ModelConfig& config,
                           const std::vector<TableSource>& tables, const std::function<void(std::uint64_t)>& progress);

}  // namespace pleshard::detail
