#pragma once
// How the GPU gets the rows of tables that live in host memory (the pinned tier): read by the
// GPU itself, row by row through UVA, or gathered by the host's threads into a pinned block
// and moved in one contiguous copy (`--host-reads`), or both at once, each side taking a share
// of the step's distinct rows. UVA reads cost a page translation and a round trip over PCIe
// per row; the gather costs one wait for the step's row plan, the host's copies and a copy's
// latency, and then moves rows at the bus's speed, as fast as the host's memory and cores
// let it. Which is faster depends on the step's size and the machine: `auto` reads steps of
// fewer than k_host_gather_min_ids lookups a table through UVA and shares larger ones
// (docs/performance-log.md). A step captured in a CUDA graph reads through UVA (the graph
// replays only what is enqueued; a gather is host work).

#include <cstdint>
#include <string_view>

namespace pleshard {

enum class HostReads { automatic, gather, uva, both };

[[nodiscard]] const char* to_string(HostReads reads);  // "auto", "gather", "uva", "both"
// InputError naming the option for another name.
[[nodiscard]] HostReads parse_host_reads(std::string_view name);

// Lookups of a table in one step from which `auto` gathers on the host. On an H100 (FP8 +
// E8M0 rows of 256 values, 16.8M-row tables, docs/performance-log.md) UVA took 38 us for 4,096
// ids and 288 us for 16,384, the host gather 156 and 563 us; at 24,576 ids a table the
// gather's step was 1.4x faster, at 65,536 ids its lookup 1.9x.
inline constexpr std::int64_t k_host_gather_min_ids = 16384;

// Whether a step of `ids` lookups of a table is gathered by the host, alone or beside the
// GPU: never while a CUDA graph captures it.
[[nodiscard]] bool gathers_on_host(HostReads reads, std::int64_t ids, bool capturing);
// Whether such a step's distinct rows are shared between the host and the GPU (GatherShare).
[[nodiscard]] bool shares_with_gpu(HostReads reads);

// The share of a gathered step's distinct rows that the host copies while the GPU reads the
// rest through UVA, both into the one block the decode reads: the host's memory and the
// GPU's reads over the bus are two paths that run at once. The split is set each step by
// which side finished first the step before, so the two come to finish together on any
// machine; the block and the results are the same whatever the split.
class GatherShare {
 public:
  // `fixed` in [0, 1] holds the share there; a negative one adapts it, from one half.
  explicit GatherShare(double fixed = -1.0);
  [[nodiscard]] double share() const { return share_; }
  // The host's rows of a step of `rows` distinct rows: the first ones, in address order.
  [[nodiscard]] std::int64_t host_rows(std::int64_t rows) const;
  // After a shared step: whether the GPU's rows were there when the host had copied its own.
  void settle(bool gpu_finished_first);

  // How far one step moves the share.
  static constexpr double k_step = 1.0 / 32;

 private:
  double share_;
  bool fixed_;
};

}  // namespace pleshard
