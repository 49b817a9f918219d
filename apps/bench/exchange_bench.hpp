#pragma once
// `pleshard bench exchange`: algbw and busbw (nccl-tests conventions) of the collectives
// each exchange strategy's step makes, at the message sizes of steps of several token
// counts, validated (#wrong): gather-reduce's all-gather (tokens x heads int64 per rank,
// the size of its token blocks' ids) and embedding all-reduce (tokens x ple_embed_dim
// 16-bit values); reduce-scatter's reduce-scatter of those embeddings; owner's two
// all-to-alls, of ids (tokens x heads local indexes, spread evenly over the owners, none
// deduplicated: its worst case) and of the stored rows sent back. Over any collective
// backend: MPI on host memory, or device memory over NCCL or staged MPI.

#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>

#include "dist/communicator_factory.hpp"
#include "engine/exchange.hpp"

namespace pleshard {

struct ExchangeBenchOptions {
  std::vector<std::int64_t> step_tokens{1, 64, 1024, 8192};
  int heads = 16;
  int ple_embed_dim = 2560;
  int id_bytes = 4;     // owner: bytes of an owner-local index
  int row_bytes = 160;  // owner: bytes of a packed stored row (160 values of FP8)
  std::vector<ExchangeStrategy> strategies{ExchangeStrategy::gather_reduce, ExchangeStrategy::reduce_scatter,
                                           ExchangeStrategy::owner};
  double min_seconds = 0.1;
  int min_repeats = 5;
};

struct ExchangeBenchResult {
  std::string strategy;
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
