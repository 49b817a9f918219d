#include "store/tier_memory.hpp"

#include <string>
#include <vector>

#include "core/collective.hpp"
#include "core/host_memory.hpp"
#include "core/mpi_check.hpp"
#if PLESHARD_HAVE_CUDA
#include "kernels/cuda/device.hpp"
#endif

namespace pleshard {

std::size_t gpu_row_pitch(const TableLayout& layout) {
  const std::size_t row_bytes = layout.row_bytes();
  const std::size_t scale_bytes = layout.scale_bytes();
  return scale_bytes == 0 ? row_bytes : (row_bytes + scale_bytes + 15) / 16 * 16;
}

std::uint64_t tier_bytes(StorageTier tier, std::span<const TableLayout> layouts, std::span<const RowRange> ranges) {
  std::uint64_t bytes = 0;
  for (std::size_t d = 0; d < layouts.size(); ++d) {
    const auto rows = static_cast<std::uint64_t>(ranges[d].size());
    switch (tier) {
      case StorageTier::host:
        bytes += rows * layouts[d].bytes_per_row();
        break;
      case StorageTier::device:
      case StorageTier::pinned:
        bytes += rows * gpu_row_pitch(layouts[d]);
        break;
      case StorageTier::disk:
        break;
    }
  }
  return bytes;
}

void require_tier_memory(MPI_Comm world, StorageTier tier, std::uint64_t bytes, std::uint64_t device_reserve) {
  if (tier == StorageTier::disk) return;
  MPI_Comm node = MPI_COMM_NULL;
  PLESHARD_MPI_CHECK(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int ranks = 1;
  PLESHARD_MPI_CHECK(MPI_Comm_size(node, &ranks));
  // Which memory this rank's tables go to: the node's host memory (-1) or a GPU.
  std::int64_t where = -1;
#if PLESHARD_HAVE_CUDA
  int gpu = 0;
  if (tier == StorageTier::device && cudaGetDevice(&gpu) == cudaSuccess) where = gpu;
#endif
  const std::uint64_t mine[2] = {static_cast<std::uint64_t>(where), bytes};
  std::vector<std::uint64_t> all(2 * static_cast<std::size_t>(ranks));
  PLESHARD_MPI_CHECK(MPI_Allgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, node));
  PLESHARD_MPI_CHECK(MPI_Comm_free(&node));
  std::uint64_t needed = 0;
  int sharing = 0;
  for (int r = 0; r < ranks; ++r)
    if (all[2 * static_cast<std::size_t>(r)] == mine[0]) {
      needed += all[2 * static_cast<std::size_t>(r) + 1];
      ++sharing;
    }
  const std::string who = std::to_string(sharing) + (sharing == 1 ? " rank" : " ranks");
  collective_try(world, [&] {
    if (tier == StorageTier::device) {
#if PLESHARD_HAVE_CUDA
      const kernels::DeviceMemory memory = kernels::device_memory();
      const std::uint64_t usable = memory.free > device_reserve ? memory.free - device_reserve : 0;
      if (needed > usable)
        throw InputError("device tier: the tables of " + who + " on GPU " + std::to_string(where) + " need " +
                         std::to_string(needed) + " bytes, the GPU has " + std::to_string(usable) + " of " +
                         std::to_string(memory.total) + " free for them (use more ranks, or --storage pinned)");
#endif
      return;
    }
    const std::uint64_t available = available_host_bytes();
    if (available != 0 && needed > available)
      throw InputError(std::string(to_string(tier)) + " tier: the tables of " + who + " on this node need " +
                       std::to_string(needed) + " bytes of host memory, " + std::to_string(available) +
                       " are available (MemAvailable; use more nodes, or --storage disk)");
  });
}

}  // namespace pleshard
