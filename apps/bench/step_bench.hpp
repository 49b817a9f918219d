#pragma once
// `pleshard bench step`: whole engine steps — hash, exchange, row fetch and decode of every
// PLE layer — at several token counts per DP rank, eager and replayed from CUDA graphs, on
// any world size, layout and tier. Steps come from a token stream (a corpus, or synthetic
// requests) scheduled as `pleshard run` schedules them. Measured the nccl-tests way:
// warm-up (graphs captured), barrier, back-to-back steps; each step's latency is its time
// on the engine's stream, the max over ranks. The last step is checked element by element
// against rows read from the checkpoint and decoded by the shared core (#wrong).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <mpi.h>

#include "engine/exchange.hpp"
#include "engine/ple_engine.hpp"
#include "format/row_format.hpp"
#include "model/model_config.hpp"
#include "store/storage_tier.hpp"

namespace pleshard {

struct StepBenchOptions {
  ModelConfig config;
  std::vector<StorageTier> tiers{StorageTier::host};
  // "auto" or a placement per table ("0=device,1=pinned"): one engine so placed instead of
  // one per tier of `tiers` (an automatic one sizes its own row cache).
  std::string placement;
  // Each strategy side by side (the disk tier exchanges nothing: automatic alone).
  std::vector<ExchangeStrategy> exchanges{ExchangeStrategy::automatic};
  std::vector<std::int64_t> tokens{1, 8, 64, 256, 1024, 8192};  // per DP rank and step
  bool eager = true;
  bool graph = true;  // where the tier and layout allow it
  int tp = 1;
  int etp = 0;  // 0: --tp
  // Empty: synthetic tables of `config` stored as `format`, generated where the tier keeps
  // them (no file).
  std::filesystem::path checkpoint;
  RowFormat format = RowFormat::bf16;
  std::filesystem::path requests;  // empty: synthetic Zipf-like requests
  OutDtype dtype = OutDtype::bf16;
  double min_seconds = 0.5;
  int min_steps = 20;
  // Steps cycled through, so ids vary from step to step (each is run once to warm up).
  int distinct_steps = 64;
  // A row cache: the pinned and disk tiers run without it and with it, side by side (the
  // steps cycle, so hit rates are those of a stream seen again; `pleshard run` streams).
  CacheOptions cache;
  PageCache disk_reads = PageCache::use;                     // EngineOptions::disk_reads
  HostReads host_reads = HostReads::automatic;               // EngineOptions::host_reads
  std::int64_t owner_gpu_plan_from = k_owner_gpu_plan_from;  // EngineOptions::owner_gpu_plan_from
  std::int64_t owner_fixed_below = 0;                        // EngineOptions::owner_fixed_below
  double collective_timeout_s = 600;                         // EngineOptions::collective_timeout_s
};

struct StepBenchResult {
  std::string tier;
  std::string mode;     // "eager" or "graph"
  std::string backend;  // the exchange's collectives
  std::string exchange;
  double bytes_per_token = 0;  // sent per rank per token by the exchange (ExchangeTraffic)
  double exchange_share = 0;   // of the eager steps' time in the exchange's phases; 0 for graphs
  int ranks = 1;
  int tp = 1;
  int etp = 1;
  int layers = 1;
  int heads = 1;
  std::int64_t tokens = 0;  // per DP rank and step
  std::int64_t steps = 0;
  double p50 = 0;  // seconds per step
  double p99 = 0;
  double wall = 0;               // of all the timed steps, max over ranks
  std::int64_t tokens_done = 0;  // in the timed steps, all DP ranks together
  std::int64_t wrong = 0;
  int dp = 1;
  bool cached = false;     // with the row cache
  double hit_rate = 0;     // of the timed steps' lookups, all ranks: found in the cache
  double repeat_rate = 0;  // and repeating a miss of their step (read from the tier once)

  // Of all DP ranks together, and of one (the same DP ranks' mean).
  [[nodiscard]] double tokens_per_second() const { return static_cast<double>(tokens_done) / wall; }
  [[nodiscard]] double tokens_per_second_per_dp_rank() const { return tokens_per_second() / dp; }
  [[nodiscard]] double rows_per_second() const { return tokens_per_second() * heads * layers; }
};

struct StepBenchRun {
  std::vector<StepBenchResult> results;
  std::vector<std::string> skipped;  // cases not run, and why (CUDA graphs refused)
};

// Collective over `comm`.
[[nodiscard]] StepBenchRun run_step_bench(MPI_Comm comm, const StepBenchOptions& options);

}  // namespace pleshard
