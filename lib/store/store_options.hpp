#pragma once
// How the row stores read, whatever their tier asks of them (store/row_store_factory.hpp).

#include <cstddef>

#include <mpi.h>

#include "io/file_reads.hpp"
#include "store/host_reads.hpp"

namespace pleshard {

struct StoreOptions {
  // The disk tier's reads: through the page cache, or past it.
  PageCache disk_reads = PageCache::use;
  // The ranks of my node holding the same ranges, which keep one copy of the rows the host
  // and pinned tiers hold in host memory (HostStore, GpuStore); MPI_COMM_NULL: a copy per rank.
  MPI_Comm host_share = MPI_COMM_NULL;
  // How the GPU gets pinned rows (store/host_reads.hpp), and the host threads that gather them.
  HostReads host_reads = HostReads::automatic;
  std::size_t host_threads = 1;
  // The ranks of my GPU that read each other's rows in place (`--exchange peer-read`), which
  // keep one copy of the device tier's rows on it (GpuStore); MPI_COMM_NULL: a copy per rank.
  MPI_Comm device_share = MPI_COMM_NULL;
};

}  // namespace pleshard
