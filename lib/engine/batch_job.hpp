#pragma once
// The batch job (`pleshard run`): requests in parts of about `part_tokens` tokens; within a
// part, requests are spread over the DP ranks balanced by tokens and scheduled in steps on
// every rank; each step runs every PLE layer through the engine. After each part its
// embeddings go to <out>.parts/part-NNNNNN.h5 (complete or absent), written by the TP-rank-0
// ranks together with parallel HDF5, else gathered at rank 0; a rerun of the same job skips
// the parts already written. At the end the parts are copied into <out> the same way.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "dist/topology.hpp"
#include "engine/exchange.hpp"
#include "engine/step_scheduler.hpp"
#include "store/storage_tier.hpp"
#include "io/requests.hpp"

namespace pleshard {

struct JobProgress {
  std::int64_t requests_done = 0;
  std::int64_t requests = 0;
  std::int64_t tokens_done = 0;
  std::int64_t tokens = 0;
  double seconds = 0;
};

struct BatchJobOptions {
  StepSchedule schedule;
  OutDtype dtype = OutDtype::bf16;
  // Where the tables live; every tier gives the same bytes, so parts resume across tiers.
  StorageTier storage = StorageTier::host;
  // Replay every step from a CUDA graph of the step-token budget (device and pinned tiers
  // over NCCL; see PleEngine::capture_graph).
  bool cuda_graph = false;
  std::filesystem::path out;            // empty: summary only
  std::int64_t part_tokens = 1 << 16;   // tokens per output part (resume granularity)
  // Collectors write parts and the output together through MPI-IO when HDF5 is parallel;
  // false gathers everything at rank 0 instead (the path for serial HDF5).
  bool parallel_output = true;
  // Rank 0, after each step: progress over all ranks.
  std::function<void(const JobProgress&)> progress;
};

struct CollectiveReport {
  std::string name;  // e.g. "etp all_reduce"
  int ranks = 1;
  std::int64_t calls = 0;
  double bytes = 0;    // summed nccl-tests sizes on rank 0
  double seconds = 0;  // on rank 0
  [[nodiscard]] double algbw() const { return seconds > 0 ? bytes / seconds : 0; }
  [[nodiscard]] double busbw() const;
};

struct BatchJobReport {
  Topology topology;
  StorageTier storage = StorageTier::host;
  // Replay every step from a CUDA graph of the step-token budget (device and pinned tiers
  // over NCCL; see PleEngine::capture_graph).
  bool cuda_graph = false;
  std::string backend;  // the exchange's collectives: mpi, nccl or mpi-staged
  std::int64_t requests = 0;
  std::int64_t tokens = 0;
  std::int64_t rows = 0;  // embedding rows produced: tokens * heads * layers
  std::int64_t steps = 0;
  std::int64_t parts = 0;
  std::int64_t parts_resumed = 0;
  double seconds = 0;
  PhaseTimes times;  // max over ranks
  std::vector<CollectiveReport> collectives;
};

// Collective over comms.world(); every rank passes the same requests.
[[nodiscard]] BatchJobReport run_batch_job(const Communicators& comms, const ModelConfig& config,
                                           const PleCheckpoint& checkpoint,
                                           const std::vector<Request>& requests,
                                           const BatchJobOptions& options);

// Consecutive request ranges [first, last) of about `part_tokens` tokens (at least one
// request each).
[[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> split_parts(
    const std::vector<Request>& requests, std::int64_t part_tokens);

}  // namespace pleshard
