#pragma once
// `pleshard bench exchange`: algbw and busbw (nccl-tests conventions) of the collectives
// one step's exchange makes, at the message sizes of steps of several token counts:
// the id all-gather (tokens x heads int64 per rank), the embedding all-reduce and
// reduce-scatter (tokens x ple_embed_dim 16-bit values), validated (#wrong). Over any
// collective backend: MPI on host memory, or device memory over NCCL or staged MPI.

#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>

#include "dist/communicator_factory.hpp"

namespace pleshard {

struct ExchangeBenchOptions {
  std::vector<std::int64_t> step_tokens{1, 64, 1024, 8192};
  int heads = 16;
  int ple_embed_dim = 2560;
  double min_seconds = 0.1;
  int min_repeats = 5;
};

struct ExchangeBenchResult {
  std::string collective;
  std::string backend;
  std::int64_t tokens = 0;
  double bytes = 0;    // nccl-tests size
  double seconds = 0;  // median, max over ranks
  int ranks = 1;
  std::int64_t wrong = 0;
  [[nodiscard]] double algbw() const { return bytes / seconds; }
  [[nodiscard]] double busbw() const;
};

// Collective over `comm`; the GPU backends bind each rank to a GPU first.
[[nodiscard]] std::vector<ExchangeBenchResult> run_exchange_bench(MPI_Comm comm, CollectiveBackend backend,
                                                                  const ExchangeBenchOptions& options);

}  // namespace pleshard
