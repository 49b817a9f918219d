#pragma once
// `pleshard bench load`: a checkpoint's rows into the storage tiers (the engine's load, as a
// job makes it), next to the rate the checkpoint's files read at in the same run — every
// byte of the rank's share of each file by parallel pread, into memory and dropped — with
// the page cache dropped before each when cold. Each tier's rows are then checked against
// rows read from the checkpoint and decoded by the shared core (#wrong), and the pages behind
// the tables in host memory measured (the share on 2 MiB pages).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <mpi.h>

#include "store/storage_tier.hpp"

namespace pleshard {

struct LoadBenchOptions {
  std::filesystem::path checkpoint;
  std::filesystem::path config;  // empty: beside the checkpoint
  std::vector<StorageTier> tiers{StorageTier::device};
  bool cold = false;  // drop the files' cached pages before every read
  int check_ids = 4096;
};

struct LoadBenchResult {
  std::string what;          // "files" (the read rate) or a tier
  double seconds = 0;        // max over ranks
  double bytes = 0;          // all ranks
  double peak_resident = 0;  // max over ranks, after this case
  std::int64_t wrong = 0;
  // The tier's tables in host memory (store/table_pages.hpp): the share of their bytes on
  // 2 MiB pages over all ranks, and the lowest of a rank's; -1 where none lies there.
  double huge_share = -1;
  double huge_share_min = -1;

  [[nodiscard]] double gigabytes_per_second() const { return bytes / seconds * 1e-9; }
};

// Collective over `comm`: rank r loads its share (ranks as one ETP group) of every table.
[[nodiscard]] std::vector<LoadBenchResult> run_load_bench(MPI_Comm comm, const LoadBenchOptions& options);

}  // namespace pleshard
