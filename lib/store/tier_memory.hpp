#pragma once
// What a rank's tables take in the memory of their tier, and the check, before anything is
// allocated, that every node has it: a table that does not fit is one line naming the tier,
// the bytes needed and the bytes available, on every rank, not an out-of-memory kill
// halfway through a load.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "format/row_format.hpp"
#include "store/auto_placement.hpp"
#include "store/row_range.hpp"
#include "store/storage_tier.hpp"
#include "store/tier_descriptor.hpp"

namespace pleshard {

// Bytes per row in GPU-tier memory (device or pinned): the stored bytes, a block-scaled
// format's scales (NVFP4, FP8-E8M0) interleaved after each row's codes and the row padded to
// 16 bytes.
[[nodiscard]] std::size_t gpu_row_pitch(const TableLayout& layout);

// Bytes of rows `ranges[d]` of tables `layouts[d]`: as stored (the files' rows), as the GPU
// tiers keep them (gpu_row_pitch), and their block scales alone. The tiers' demands are made
// of these (store/tiers/).
[[nodiscard]] std::uint64_t rows_stored_bytes(std::span<const TableLayout> layouts, std::span<const RowRange> ranges);
[[nodiscard]] std::uint64_t rows_gpu_bytes(std::span<const TableLayout> layouts, std::span<const RowRange> ranges);
[[nodiscard]] std::uint64_t rows_scale_bytes(std::span<const TableLayout> layouts, std::span<const RowRange> ranges);

// What the tier keeps for rows `ranges[d]` of tables `layouts[d]`, per kind of memory (its
// descriptor's demand); for the disk tier the block-scaled tables' scales of those rows
// (disk_store.hpp), in host memory.
[[nodiscard]] std::vector<MemoryUse> tier_memory_use(StorageTier tier, std::span<const TableLayout> layouts,
                                                     std::span<const RowRange> ranges);
// The same bytes, summed over the kinds of memory.
[[nodiscard]] std::uint64_t tier_bytes(StorageTier tier, std::span<const TableLayout> layouts,
                                       std::span<const RowRange> ranges);

// Bytes of the files the tier reads when it loads (its loading rule): the rows' stored bytes
// (a GPU tier pads block-scaled rows in memory; the files do not), the disk tier's block scales.
[[nodiscard]] std::uint64_t load_bytes(StorageTier tier, std::span<const TableLayout> layouts,
                                       std::span<const RowRange> ranges);

// GPU memory a rank keeps beside its tables: its step workspace and collectives.
inline constexpr std::uint64_t k_device_table_reserve_bytes = std::uint64_t{1} << 30;

// Collective over `world`: InputError on every rank unless the `use` of every rank fits —
// host memory: the sum over a node's ranks within its MemAvailable; GPU memory: the sum over
// the ranks that share a GPU within its free memory, less `device_reserve` per rank for its
// step workspace and collectives. The message names `tier`; `what` and `remedy` say what the
// bytes are and what to change (defaults: the tables, and the tier's remedy).
void require_tier_memory(MPI_Comm world, StorageTier tier, MemoryUse use,
                         std::uint64_t device_reserve = k_device_table_reserve_bytes,
                         const std::string& what = "the tables", const std::string& remedy = "");
// The same for `bytes` in the memory the tier keeps its tables in (the first kind of its demand).
void require_tier_memory(MPI_Comm world, StorageTier tier, std::uint64_t bytes,
                         std::uint64_t device_reserve = k_device_table_reserve_bytes,
                         const std::string& what = "the tables", const std::string& remedy = "");
// require_tier_memory for what a step keeps in its space's memory beside the tables (its
// workspace, a row cache), whatever their tiers: the message names the kind of memory.
void require_space_memory(MPI_Comm world, MemoryUse use, const std::string& what, const std::string& remedy);
// require_tier_memory for the tables themselves, each kind of memory their demand names,
// whose host memory may also come from the reserved 2 MiB pages still free
// (available_table_bytes: MemAvailable leaves them out).
void require_table_memory(MPI_Comm world, StorageTier tier, std::span<const MemoryUse> uses);
void require_table_memory(MPI_Comm world, StorageTier tier, std::uint64_t bytes);

// The margins --placement auto keeps: of a GPU's memory, 1 GiB and 2% of its size (NCCL's
// buffers, CUDA graphs, the runtime's own) beside each rank's step workspace; of a node's
// host memory, 2 GiB and 5% of what is available.
inline constexpr std::uint64_t k_device_margin_bytes = std::uint64_t{1} << 30;
inline constexpr double k_device_margin_share = 0.02;
inline constexpr std::uint64_t k_host_margin_bytes = std::uint64_t{2} << 30;
inline constexpr double k_host_margin_share = 0.05;

// Collective over `world`: what each rank may use for tables and caches (the smallest over
// the ranks, so that every rank plans alike): its share of its GPU's free memory (at most
// `gpu_limit` bytes where that is not 0) less the margin and `workspace` bytes, and its
// share of its node's available host memory less the margin: shared by the copies of the
// node's rows, one per rank, or one per `host_sharers` ranks where that many ranks of a node
// share one copy (the host and pinned tiers' one copy per node).
[[nodiscard]] PlacementCapacity measure_capacity(MPI_Comm world, bool gpu, bool files, std::uint64_t gpu_limit,
                                                 std::uint64_t workspace, int host_sharers = 1);

}  // namespace pleshard
