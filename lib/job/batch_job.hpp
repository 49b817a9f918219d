#pragma once
// The batch job (`pleshard run`): requests in parts of about `part_tokens` tokens; within a
// part, requests are spread over the DP ranks balanced by tokens and scheduled in steps.
// Scheduling is deterministic, so every rank knows every DP rank's steps and the ETP
// groups step together without asking each other. Each step runs every PLE layer through
// the engine; with an output, the step's embeddings are copied into pinned buffers while
// the next step runs and written in place into the output file (job/job_output.hpp),
// resumable by part.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "dist/topology.hpp"
#include "engine/ple_engine.hpp"
#include "io/requests.hpp"
#include "job/step_scheduler.hpp"
#include "store/placement.hpp"

namespace pleshard {

struct JobProgress {
  std::int64_t requests_done = 0;  // resumed ones included
  std::int64_t requests = 0;
  std::int64_t tokens_done = 0;  // resumed ones included
  std::int64_t tokens_resumed = 0;
  std::int64_t tokens = 0;
  double seconds = 0;  // since this run's first step
  // Tokens per second of this run's work (resumed tokens were not done in `seconds`).
  [[nodiscard]] double tokens_per_s() const {
    return seconds > 0 ? static_cast<double>(tokens_done - tokens_resumed) / seconds : 0;
  }
};

struct BatchJobOptions {
  StepSchedule schedule;
  OutDtype dtype = OutDtype::bf16;
  // Where the tables live; every tier gives the same bytes, so outputs resume across tiers.
  StorageTier storage = StorageTier::host;  // every table's, unless `placement` or `auto_placement`
  std::vector<StorageTier> placement;       // each table's tier (--placement D=T,...)
  bool auto_placement = false;              // --placement auto (EngineOptions::auto_placement)
  std::uint64_t gpu_memory_limit = 0;       // EngineOptions::gpu_memory_limit
  bool share_tables = true;                 // EngineOptions::share_tables (--no-shared-tables)
  // Replay steps from CUDA graphs of bucketed sizes (EngineOptions::cuda_graphs).
  bool cuda_graph = false;
  // Name each step's successor to the engine (NextStep), so that a store that fetches ahead
  // (the disk tier) reads it beside the step's decode.
  bool fetch_ahead = true;
  ExchangeStrategy exchange = ExchangeStrategy::automatic;  // EngineOptions::exchange
  std::filesystem::path out;                                // empty: summary only
  bool overwrite = false;                                   // replace an output of another job at `out`
  std::vector<std::filesystem::path> inputs;                // files read besides the checkpoint's: never outputs
  // The requests as the output names them (job/output_description.hpp): the file as named,
  // or how synthetic requests were made, and the SHA-256 of the file's bytes.
  std::string requests_source;
  std::string requests_sha256;
  std::int64_t part_tokens = 1 << 16;  // tokens per output part (resume granularity)
  double collective_timeout_s = EngineOptions{}.collective_timeout_s;
  CacheOptions cache;                                        // EngineOptions::cache
  PageCache disk_reads = PageCache::use;                     // EngineOptions::disk_reads
  HostReads host_reads = HostReads::automatic;               // EngineOptions::host_reads
  std::int64_t owner_gpu_plan_from = k_owner_gpu_plan_from;  // EngineOptions::owner_gpu_plan_from
  std::int64_t owner_fixed_below = 0;                        // EngineOptions::owner_fixed_below
  // Rank 0, after each step: progress over all ranks (from the schedule every rank knows).
  std::function<void(const JobProgress&)> progress;
};

struct CollectiveReport {
  std::string name;  // e.g. "etp all_reduce"
  int ranks = 1;
  std::int64_t calls = 0;
  double bytes = 0;    // summed nccl-tests sizes on rank 0
  double seconds = 0;  // on rank 0, of the collectives themselves (events on a GPU)
  [[nodiscard]] double algbw() const { return seconds > 0 ? bytes / seconds : 0; }
  [[nodiscard]] double busbw() const;
};

struct BatchJobReport {
  std::string job = "run";  // who ran the steps: `pleshard run`, or "python" (pleshard.Engine)
  Topology topology;
  Placement placement;               // each table's tier
  PlacementReport placement_report;  // why, where the placement was automatic
  bool cuda_graph = false;
  std::string backend;              // the exchange's collectives: mpi, nccl, mpi-staged or none
  std::string backend_note;         // why GPU buffers go through host copies (shared GPUs); empty otherwise
  std::string exchange;             // the strategy
  RankThreads threads;              // rank 0's host threads, and where their count came from
  std::string output;               // the output file; empty: summary only
  std::string model_family;         // the config's family ("qwen4exp", "deepseek_engram", or a registered one)
  std::string token_map;            // describe_token_map: which map the tables were hashed through
  std::int64_t requests = 0;        // of the job, resumed ones included
  std::int64_t tokens = 0;          // of the job, resumed ones included
  std::int64_t tokens_resumed = 0;  // in the parts an earlier run completed (kept, not done again)
  std::int64_t rows_per_token = 0;  // embedding rows of a token: heads * layers
  std::int64_t steps = 0;           // this run's, max over ranks
  std::int64_t parts = 0;
  std::int64_t parts_resumed = 0;
  bool already_complete = false;  // the output held this job's whole output: nothing was done
  double seconds = 0;             // this run's work: the first step to the output's commit, max over ranks
  PhaseTimes times;               // max over ranks
  std::int64_t graphs_captured = 0;
  std::int64_t steps_fetched_ahead = 0;  // max over ranks: steps begun inside the step before
  // Max over ranks: steps started (PleEngine::start; Python's Engine.start), and their tables
  // signalled part by part, as each tier's were decoded.
  std::int64_t started_steps = 0;
  std::int64_t tables_ready_early = 0;
  // Lookups of pinned tables (per table and step), summed over ranks: gathered by the host,
  // or read by the GPU through UVA (EngineOptions::host_reads).
  std::string host_reads;  // the option, "auto", "gather", "uva" or "both"
  std::int64_t host_reads_gathered = 0;
  std::int64_t host_reads_uva = 0;
  // Of the gathered lookups' distinct rows, those the host copied and those the GPU read
  // beside it (RowStore::HostReadCounts).
  std::int64_t host_gather_rows_by_host = 0;
  std::int64_t host_gather_rows_by_gpu = 0;
  double step_p50 = 0;  // rank 0's step latencies, on its stream
  double step_p99 = 0;
  double host_copy_bytes = 0;     // embeddings copied to host memory, all ranks
  double bytes_written = 0;       // embeddings written to the output, all ranks
  double write_seconds = 0;       // max over ranks of the time in writes and syncs
  double load_seconds = 0;        // max over ranks: rows into the tier, before the first step
  double load_bytes = 0;          // rows the tier keeps, all ranks
  double load_peak_resident = 0;  // max over ranks of the peak resident memory after the load
  double shared_ranks = 1;        // max over ranks: ranks of a node sharing one copy of rows (host tiers; peer reads)
  double cache_fill_seconds = 0;  // max over ranks: the row cache's static part, after the load
  // The pages behind the tables in host memory, agreed over the ranks by the engine
  // (TableLoad); what rank 0's machine offers for 2 MiB pages and where its pages go.
  std::vector<HostTablePages> host_pages;
  std::string huge_page_offer;
  std::string numa_placement;
  std::vector<CollectiveReport> collectives;
  std::vector<CacheReport> cache;  // per layer, summed over ranks; empty without a cache
  // What the exchange moved, summed over ranks (tokens: each rank's DP rank's, so bytes over
  // tokens is bytes sent per rank per token).
  ExchangeTraffic traffic;
  [[nodiscard]] std::int64_t tokens_done() const { return tokens - tokens_resumed; }  // in this run
  [[nodiscard]] std::int64_t rows_done() const { return tokens_done() * rows_per_token; }
  // This run's work over this run's time; 0 when it did nothing.
  [[nodiscard]] double tokens_per_s() const {
    return seconds > 0 && tokens_done() > 0 ? static_cast<double>(tokens_done()) / seconds : 0;
  }
  [[nodiscard]] double bytes_per_token() const {
    return traffic.tokens > 0 ? traffic.bytes_sent / static_cast<double>(traffic.tokens) : 0;
  }
  // The share of the steps' time in the exchange's collectives (gather and combine phases).
  [[nodiscard]] double exchange_share() const {
    return times.steps > 0 ? (times[StepPhase::gather] + times[StepPhase::combine]) / times.steps : 0;
  }
};

// The engine's settings among the job's.
[[nodiscard]] EngineOptions engine_options(const BatchJobOptions& options);

// The report's values that `engine` knows (its tier, exchange, steps' phases and latencies,
// load, traffic and cache), this rank's own.
void add_engine_report(BatchJobReport& report, const PleEngine& engine);
// Collective over `world`: each value reduced over the ranks as docs/report.md says (maxima of
// times, sums of sizes); the engine's collectives, this rank's.
void reduce_report(BatchJobReport& report, const PleEngine& engine, MPI_Comm world);

// Collective over comms.world(); every rank passes the same requests.
[[nodiscard]] BatchJobReport run_batch_job(const Communicators& comms, const ModelConfig& config,
                                           const PleCheckpoint& checkpoint, const std::vector<Request>& requests,
                                           const BatchJobOptions& options);

// Consecutive request ranges [first, last) of about `part_tokens` tokens (at least one
// request each).
[[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> split_parts(const std::vector<Request>& requests,
                                                                           std::int64_t part_tokens);

}  // namespace pleshard
