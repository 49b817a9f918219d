#pragma once
// `pleshard bench hash`: tokens/s and ids/s of the host and CUDA hash kernels over
// synthetic Zipf-like batches, validated against the host kernel (#wrong).

#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>

#include "hash/token_batch.hpp"
#include "model/model_config.hpp"

namespace pleshard {

struct HashBenchOptions {
  std::vector<std::int64_t> batch_tokens{1, 64, 8192, 1 << 20};
  double min_seconds = 0.2;  // time each case at least this long (after warm-up)
  int min_repeats = 5;
  bool host = true;
  bool cuda = true;  // when built with CUDA and a device is present
};

struct HashBenchResult {
  std::string kernel;  // "host" or "cuda"
  std::int64_t tokens = 0;
  int heads = 0;
  int repeats = 0;
  double seconds = 0;  // median time of one batch, max over ranks
  std::int64_t wrong = 0;

  [[nodiscard]] double tokens_per_second() const { return tokens / seconds; }
  [[nodiscard]] double ids_per_second() const { return static_cast<double>(tokens) * heads / seconds; }
};

// Collective over `comm`: every rank times its own batch; times are reduced with MAX.
[[nodiscard]] std::vector<HashBenchResult> run_hash_bench(MPI_Comm comm, const ModelConfig& config,
                                                          const HashBenchOptions& options);

// Synthetic batch of `tokens` tokens: Zipf-like token ids, requests of up to 512 tokens,
// fresh and continuing contexts alternating; deterministic in `seed`.
[[nodiscard]] TokenBatch make_bench_batch(const ModelConfig& config, std::int64_t tokens, std::uint64_t seed);

}  // namespace pleshard
