#include "store/tier_memory.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "core/collective.hpp"
#include "core/host_memory.hpp"
#include "core/mpi_check.hpp"
#include "core/option_names.hpp"
#include "core/watched_collectives.hpp"
#include "kernels/gpu_device.hpp"

namespace pleshard {

std::size_t gpu_row_pitch(const TableLayout& layout) {
  const std::size_t row_bytes = layout.row_bytes();
  const std::size_t scale_bytes = layout.scale_bytes();
  return scale_bytes == 0 ? row_bytes : (row_bytes + scale_bytes + 15) / 16 * 16;
}

namespace {

// Bytes of the rows `ranges[d]` of tables `layouts[d]`, `per_row(layouts[d])` each.
template <typename PerRow>
std::uint64_t rows_bytes(std::span<const TableLayout> layouts, std::span<const RowRange> ranges, PerRow per_row) {
  std::uint64_t bytes = 0;
  for (std::size_t d = 0; d < layouts.size(); ++d)
    bytes += static_cast<std::uint64_t>(ranges[d].size()) * per_row(layouts[d]);
  return bytes;
}

}  // namespace

std::uint64_t rows_stored_bytes(std::span<const TableLayout> layouts, std::span<const RowRange> ranges) {
  return rows_bytes(layouts, ranges, [](const TableLayout& l) { return l.bytes_per_row(); });
}

std::uint64_t rows_gpu_bytes(std::span<const TableLayout> layouts, std::span<const RowRange> ranges) {
  return rows_bytes(layouts, ranges, gpu_row_pitch);
}

std::uint64_t rows_scale_bytes(std::span<const TableLayout> layouts, std::span<const RowRange> ranges) {
  return rows_bytes(layouts, ranges, [](const TableLayout& l) { return l.scale_bytes(); });
}

std::vector<MemoryUse> tier_memory_use(StorageTier tier, std::span<const TableLayout> layouts,
                                       std::span<const RowRange> ranges) {
  return tier_descriptor(tier).memory(layouts, ranges);
}

std::uint64_t tier_bytes(StorageTier tier, std::span<const TableLayout> layouts, std::span<const RowRange> ranges) {
  std::uint64_t bytes = 0;
  for (const MemoryUse& use : tier_memory_use(tier, layouts, ranges)) bytes += use.bytes;
  return bytes;
}

std::uint64_t load_bytes(StorageTier tier, std::span<const TableLayout> layouts, std::span<const RowRange> ranges) {
  return tier_descriptor(tier).load_bytes(layouts, ranges);
}

namespace {

// The ranks of my node that use the memory I use — my GPU's (known by its UUID: ranks may
// see one GPU under different ordinals) or the node's host memory — and the sum of their
// `bytes`; also how many ranks the node has.
struct Sharing {
  int ranks = 1;            // using my memory
  std::uint64_t bytes = 0;  // theirs, summed
  int node = 1;
};

Sharing sharing_of(MPI_Comm world, bool gpu, std::uint64_t bytes) {
  const std::string what = "the memory every rank of the node uses";
  MPI_Comm node = watched_split_shared(world, 0, what);
  int ranks = 1;
  PLESHARD_MPI_CHECK(MPI_Comm_size(node, &ranks));
  std::array<std::uint64_t, 2> where{};
  if (gpu) where = kernels::gpu_uuid();
  const std::uint64_t mine[3] = {where[0], where[1], bytes};
  std::vector<std::uint64_t> all(3 * static_cast<std::size_t>(ranks));
  watched_allgather(mine, all.data(), 3, MPI_UINT64_T, node, what);
  PLESHARD_MPI_CHECK(MPI_Comm_free(&node));
  Sharing s{0, 0, ranks};
  for (std::size_t r = 0; r < static_cast<std::size_t>(ranks); ++r)
    if (all[3 * r] == mine[0] && all[3 * r + 1] == mine[1]) {
      ++s.ranks;
      s.bytes += all[3 * r + 2];
    }
  return s;
}

std::uint64_t less(std::uint64_t bytes, std::uint64_t margin) { return bytes > margin ? bytes - margin : 0; }

}  // namespace

PlacementCapacity measure_capacity(MPI_Comm world, bool gpu, bool files, std::uint64_t gpu_limit,
                                   std::uint64_t workspace, int host_sharers) {
  const Sharing sharing = sharing_of(world, gpu, 0);
  PlacementCapacity c;
  c.gpu = gpu;
  c.files = files;
  std::uint64_t device = 0;
  if (gpu) {
    const kernels::GpuMemory memory = kernels::gpu_memory();
    const auto margin =
        k_device_margin_bytes + static_cast<std::uint64_t>(k_device_margin_share * static_cast<double>(memory.total));
    device = less(memory.free, margin) / static_cast<std::uint64_t>(sharing.ranks);
    if (gpu_limit != 0) device = std::min(device, gpu_limit);
    device = less(device, workspace);
  }
  const std::uint64_t available = available_table_bytes();
  const auto host_margin =
      std::max(k_host_margin_bytes, static_cast<std::uint64_t>(k_host_margin_share * static_cast<double>(available)));
  // Unknown (neither /proc/meminfo nor a cgroup limit readable): not a limit here; the
  // tiers' own checks and allocations still refuse what does not fit.
  const std::uint64_t host = available == 0 ? std::uint64_t{1} << 62 : less(available, host_margin);
  const int copies = (sharing.node + std::max(1, host_sharers) - 1) / std::max(1, host_sharers);  // on my node
  std::uint64_t limits[2] = {device, host / static_cast<std::uint64_t>(copies)};
  watched_allreduce(limits, 2, MPI_UINT64_T, MPI_MIN, world, "the memory every rank has for tables");
  c.device_bytes = limits[0];
  c.host_bytes = limits[1];
  return c;
}

namespace {

// require_tier_memory, the message begun with `named` and ended with `change`; host memory
// held against `host` (what the message says it was counted from: `host_source`).
void require_memory(MPI_Comm world, const std::string& named, MemoryUse use, std::uint64_t device_reserve,
                    const std::string& what, const std::string& change, std::uint64_t host,
                    const std::string& host_source) {
  const bool gpu = use.kind == MemoryKind::gpu;
  const Sharing shared = sharing_of(world, gpu, use.bytes);
  const std::uint64_t needed = shared.bytes;
  const int sharing = shared.ranks;
  const std::string who = std::to_string(sharing) + (sharing == 1 ? " rank" : " ranks");
  collective_try(world, [&] {
    if (gpu) {
      if (!kernels::built_with_cuda()) return;  // GPU tiers are refused where the build has no CUDA
      const kernels::GpuMemory memory = kernels::gpu_memory();
      // Every rank on the GPU needs its own step workspace and collectives' buffers.
      const std::uint64_t reserve = device_reserve * static_cast<std::uint64_t>(sharing);
      const std::uint64_t usable = memory.free > reserve ? memory.free - reserve : 0;
      if (needed > usable)
        throw InputError(named + what + " of " + who + " on GPU " + std::to_string(kernels::current_gpu()) + " need " +
                         std::to_string(needed) + " bytes, the GPU has " + std::to_string(usable) + " of " +
                         std::to_string(memory.total) + " free for them (" + change + ")");
      return;
    }
    const std::uint64_t available = host;
    if (available != 0 && needed > available)
      throw InputError(named + what + " of " + who + " on this node need " + std::to_string(needed) +
                       " bytes of host memory, " + std::to_string(available) + " are available (" + host_source + "; " +
                       change + ")");
  });
}

// The first kind of memory the tier's demand names: where it keeps its tables.
MemoryKind home_of(StorageTier tier) {
  const std::vector<MemoryUse> uses = tier_memory_use(tier, {}, {});
  return uses.empty() ? MemoryKind::host : uses.front().kind;
}

// "device tier: ", and what to change: `remedy`, else the tier's.
std::string tier_named(StorageTier tier) { return std::string(to_string(tier)) + " tier: "; }
std::string change_for(StorageTier tier, const std::string& remedy) {
  return remedy.empty() ? tier_descriptor(tier).memory_remedy() : remedy;
}

constexpr const char* k_host_sources = "MemAvailable, or the cgroup's limit";
constexpr const char* k_table_sources = "MemAvailable, or the cgroup's limit, and free reserved 2 MiB pages";

}  // namespace

void require_tier_memory(MPI_Comm world, StorageTier tier, MemoryUse use, std::uint64_t device_reserve,
                         const std::string& what, const std::string& remedy) {
  require_memory(world, tier_named(tier), use, device_reserve, what, change_for(tier, remedy), available_host_bytes(),
                 k_host_sources);
}

void require_space_memory(MPI_Comm world, MemoryUse use, const std::string& what, const std::string& remedy) {
  require_memory(world, std::string(to_string(use.kind)) + ": ", use, 0, what, remedy, available_host_bytes(),
                 k_host_sources);
}

void require_tier_memory(MPI_Comm world, StorageTier tier, std::uint64_t bytes, std::uint64_t device_reserve,
                         const std::string& what, const std::string& remedy) {
  require_tier_memory(world, tier, {home_of(tier), bytes}, device_reserve, what, remedy);
}

void require_table_memory(MPI_Comm world, StorageTier tier, std::span<const MemoryUse> uses) {
  for (const MemoryUse& use : uses)
    require_memory(world, tier_named(tier), use, k_device_table_reserve_bytes, "the tables", change_for(tier, ""),
                   available_table_bytes(), k_table_sources);
}

void require_table_memory(MPI_Comm world, StorageTier tier, std::uint64_t bytes) {
  const MemoryUse use{home_of(tier), bytes};
  require_table_memory(world, tier, {&use, 1});
}

}  // namespace pleshard
