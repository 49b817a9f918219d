#pragma once
// How the GPU gets the rows of tables that live in host memory (the pinned tier): read by the
// GPU itself, row by row through UVA, or gathered by the host's threads into a pinned block
// and moved in one contiguous copy (`--host-reads`). UVA reads cost a page translation and a
// round trip over PCIe per row; the gather costs one wait for the step's row plan, the
// host's copies and a copy's latency, and then moves rows at the bus's speed. Which is
// faster depends on the step's size: `auto` gathers steps of at least k_host_gather_min_ids
// lookups a table, measured on the GPU machine (docs/performance-log.md). A step captured in a
// CUDA graph reads through UVA (the graph replays only what is enqueued; a gather is host work).

#include <cstdint>
#include <string_view>

namespace pleshard {

enum class HostReads { automatic, gather, uva };

[[nodiscard]] const char* to_string(HostReads reads);  // "auto", "gather", "uva"
// InputError naming the option for another name.
[[nodiscard]] HostReads parse_host_reads(std::string_view name);

// Lookups of a table in one step from which `auto` gathers on the host. On an H100 (FP8 +
// E8M0 rows of 256 values, 16.8M-row tables, docs/performance-log.md) UVA took 38 us for 4,096
// ids and 288 us for 16,384, the host gather 156 and 563 us; at 24,576 ids a table the
// gather's step was 1.4x faster, at 65,536 ids its lookup 1.9x.
inline constexpr std::int64_t k_host_gather_min_ids = 16384;

// Whether a step of `ids` lookups of a table is gathered by the host: never while a CUDA
// graph captures it.
[[nodiscard]] bool gathers_on_host(HostReads reads, std::int64_t ids, bool capturing);

}  // namespace pleshard
