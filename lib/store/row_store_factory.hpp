#pragma once
// The one place that builds a storage tier's row store and the step space it runs in.

#include <cstdint>
#include <memory>
#include <span>

#include <mpi.h>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "exec/step_space.hpp"
#include "store/host_reads.hpp"
#include "store/row_store.hpp"

namespace pleshard {

// How the stores read, whatever their tier asks of them.
struct StoreOptions {
  // The disk tier's reads: through the page cache, or past it.
  PageCache disk_reads = PageCache::use;
  // The ranks of my node holding the same ranges, which keep one copy of the rows the host
  // and pinned tiers hold in host memory (HostStore, GpuStore); MPI_COMM_NULL: a copy per rank.
  MPI_Comm host_share = MPI_COMM_NULL;
  // How the GPU gets pinned rows (store/host_reads.hpp), and the host threads that gather them.
  HostReads host_reads = HostReads::automatic;
  std::size_t host_threads = 1;
};

// Refuses, in one line, tables of `format` in `tier` where the tier decodes on the GPU (the
// disk tier does where one is present) and the format has no GPU kernel (a registered one).
void require_tier_decodes(StorageTier tier, RowFormat format);

// Every table of the checkpoint in `tier`: rows ranges[d] of table d (the disk tier always
// holds every row), in `space` (the host space for the host tier, a CUDA space for device
// and pinned). The checkpoint must outlive a disk store.
[[nodiscard]] std::unique_ptr<RowStore> make_row_store(StorageTier tier, const PleCheckpoint& checkpoint,
                                                       std::span<const RowRange> ranges, StepSpace& space,
                                                       const StoreOptions& options = {});

// The space a tier's steps run in on this process's current device.
[[nodiscard]] std::unique_ptr<StepSpace> make_tier_space(StorageTier tier);

// One layer's rows of `ids` (host memory) through the store, decoded: the ids copied into
// `space`, fetched, decoded there and copied back; waits for the result.
[[nodiscard]] std::vector<std::uint8_t> lookup_from_host(RowStore& store, StepSpace& space, int layer,
                                                         std::span<const std::int64_t> ids, OutDtype dtype);

}  // namespace pleshard
