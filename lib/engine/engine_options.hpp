#pragma once
// The engine's options, and what it hands back: a step's output, where the tables went, its
// load and its steps' statistics (engine/ple_engine.hpp).

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "engine/exchange.hpp"
#include "engine/step_marks.hpp"
#include "hash/token_batch.hpp"
#include "io/file_reads.hpp"
#include "store/host_reads.hpp"
#include "store/placement.hpp"
#include "store/table_pages.hpp"

namespace pleshard {

// A row cache in front of the pinned or disk tier (store/cached_store.hpp).
struct CacheOptions {
  std::int64_t rows = 0;  // slots per rank over every layer, or
  double gb = 0;          // their GB per rank (rows stored packed)
  // Hot rows for the static part (pleshard profile); empty: every slot is dynamic.
  std::filesystem::path profile;
  double static_share = 0.5;  // of the slots, given to the profile's hottest rows
  [[nodiscard]] bool enabled() const { return rows > 0 || gb > 0; }
};

// One layer's cache on one rank, or (reports) summed over ranks.
struct CacheReport {
  std::int64_t static_rows = 0;
  std::int64_t dynamic_rows = 0;
  std::int64_t hits = 0;  // lookups inside the rank's rows, every step so far (CacheCounts)
  std::int64_t misses = 0;
  std::int64_t repeats = 0;
};

// The most output slots an engine keeps (EngineOptions::output_slots).
inline constexpr int k_max_output_slots = 64;
// The shortest collective timeout (EngineOptions::collective_timeout_s) and the longest: below
// a second a busy node's ordinary step would end the job.
inline constexpr double k_min_collective_timeout_s = 1;
inline constexpr double k_max_collective_timeout_s = 1e7;
// Ids a layer from which the owner exchange's flat form hashes and plans a step on the GPU
// (EngineOptions::owner_gpu_plan_from). Measured with 4 ranks sharing one H200
// (docs/performance-log.md), p50 of a step planned on the host against on the GPU: 1.53 / 2.82 ms
// at 1,024 ids a layer, 4.18 / 4.97 at 32,768, 8.30 / 7.29 at 65,536, 19.8 / 16.2 at 131,072.
inline constexpr std::int64_t k_owner_gpu_plan_from = std::int64_t{1} << 16;

struct EngineOptions {
  OutDtype dtype = OutDtype::bf16;
  StorageTier tier = StorageTier::host;  // every table's, unless `placement` says otherwise
  // Each table's tier, in table order (store/placement.hpp); empty: every table on `tier`.
  std::vector<StorageTier> placement;
  // Place the tables by what every rank has (store/auto_placement.hpp) instead, and give the
  // GPU memory they leave to a row cache in front of those not on the device, unless `cache`
  // sizes one.
  bool auto_placement = false;
  // Rank 0 logs the engine's start to stderr once the options are checked: the ranks and
  // rank 0's threads (the first engine of the process), and the automatic placement's
  // choice (the run report holds both).
  bool log_start = true;
  std::uint64_t gpu_memory_limit = 0;  // bytes per rank the automatic placement may use; 0: all free
  // One copy per node of the host and pinned tiers' rows, shared by the node's ranks that hold
  // the same ranges (store/host_store.hpp, store/gpu_table.hpp); false: a copy per rank.
  bool share_tables = true;
  // The most tokens of one DP rank in a step; every buffer is sized for it at construction.
  std::int64_t max_tokens = 8192;
  // Replay steps from CUDA graphs, one per bucket of slot sizes (powers of two up to
  // max_tokens), each step on the smallest that fits. Needs the device or pinned tier, NCCL
  // wherever a group has several ranks, and no sequence parallelism across ranks.
  bool cuda_graphs = false;
  // Begin a step inside the one before where the caller names it (NextStep) and the store
  // fetches ahead, in an engine made without cuda_graphs (its eager steps, should it turn
  // them on and off again, run whole); false: every step whole, and the stores keep one set
  // of their step scratch, not two (for a caller that never names a next step: bench step,
  // the Python module).
  bool fetch_ahead = true;
  // How the ETP group's rows reach the ranks that need them (choose_exchange).
  ExchangeStrategy exchange = ExchangeStrategy::automatic;
  // A step that makes no progress for this long (a stalled GPU, a stalled or failed peer)
  // ends the job on every rank (abort_job): a stream that will not drain cannot be unwound.
  double collective_timeout_s = 600;
  CacheOptions cache;
  // The disk tier's reads: through the page cache, or past it (O_DIRECT).
  PageCache disk_reads = PageCache::use;
  // How the GPU gets pinned rows: through UVA, or gathered by the host (store/host_reads.hpp).
  HostReads host_reads = HostReads::automatic;
  // Output slots K: step s leaves its embeddings in slot s mod K, where they stay while the
  // next K - 1 steps run (a consumer keeps a few steps' embeddings without copying them);
  // each slot is a copy of the step's output buffers (in a CUDA graph's bucket, a graph
  // per slot).
  int output_slots = 1;
  // Steps of at least this many ids a layer are hashed and planned on the GPU by the owner
  // exchange, where there is one, and only each owner's count waits for the stream; smaller
  // ones on the host from the batch, with no wait (0: every step on the GPU).
  std::int64_t owner_gpu_plan_from = k_owner_gpu_plan_from;
  // Steps of fewer ids a layer per rank than this go over the owner exchange in fixed-size
  // messages: every owner as many entries as a rank can ask of one, filled or not, so no
  // count waits for the host (0: none). Under CUDA graphs, every step.
  std::int64_t owner_fixed_below = 0;
};

// The step a caller will pass to the next forward(), where it knows it (the batch job's
// schedule is deterministic): a store that fetches ahead (the disk tier) then reads its rows
// while the step before is decoded. Every rank of an ETP group passes one alike.
struct NextStep {
  const TokenBatch* batch = nullptr;  // none: the next step is not known
  std::span<const std::int64_t> group_tokens;
};

// One step's embeddings of every layer. On a GPU they are valid once the CUDA event `ready`
// (a cudaEvent_t) has passed on the engine's `stream` (a cudaStream_t); on the host at once.
// Valid until the forward() of step `step` + output_slots, which writes `slot` again: a
// consumer reading them on another stream orders its reads before that step with
// PleEngine::wait_for() or share_with().
struct StepOutput {
  std::vector<EmbeddingView> layers;
  bool on_device = false;
  void* stream = nullptr;
  void* ready = nullptr;   // recorded again two steps later (at a later point: still safe to wait for)
  std::uint64_t step = 0;  // the engine's steps before this one
  int slot = 0;            // step mod output_slots
};

// Where the tables went and why: one line per table ("table 0: device, 51.2 GB (...)").
struct PlacementReport {
  bool automatic = false;
  std::vector<std::string> lines;
  std::uint64_t cache_bytes = 0;  // the row cache an automatic placement sized (0: none, or sized by hand)
};

// This rank's load of its rows into the tier, when the engine was made.
struct TableLoad {
  double seconds = 0;
  std::uint64_t bytes = 0;  // the rows' stored bytes this rank read, as the files hold them (0: disk tier)
  int shared_ranks = 1;     // the ranks of my node sharing my rows (host tiers; every tier under peer reads; 1: none)
  std::uint64_t peak_resident = 0;  // the process's peak resident memory after the load
  double cache_fill_seconds = 0;    // the row cache's static part read from the slow tier, after it
  // The pages behind every table in host memory, measured after the load and agreed over the
  // ranks (the same on every rank); what rank 0's machine offers for 2 MiB pages, and where
  // its tables' pages go (core/numa_home.hpp).
  std::vector<HostTablePages> host_pages;
  std::string huge_page_offer;
  std::string numa_placement;
};

// The load, and where the engine's steps spent their time, on the step space's stream, and
// their spread.
struct EngineStats {
  TableLoad load;
  PhaseTimes times;
  std::int64_t steps = 0;
  std::int64_t graph_replays = 0;
  std::int64_t graphs_captured = 0;
  std::int64_t steps_fetched_ahead = 0;  // begun inside the step before (NextStep), their fetch beside its decode
  // Steps started (PleEngine::start), and their tables signalled part by part as each tier's
  // were decoded (a consumer could read them before the step's slower tiers' were fetched).
  std::int64_t started_steps = 0;
  std::int64_t tables_ready_early = 0;
  std::vector<double> step_seconds;  // every step's, in order
};

}  // namespace pleshard
