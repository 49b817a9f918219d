#pragma once
// One forward step of every PLE layer on every rank of a layout, as one plan on the step
// space: my DP rank's batch in, my embeddings of every layer out, left where the step
// wrote them (GPU memory for the GPU tiers) for a consumer in the same process to read
// without a copy. Every rank holds only its ETP row range of each table, on the table's tier
// (a disk tier alone reads whole rows on demand instead). Host-tier steps run on the host
// over MPI; GPU tiers run on the rank's GPU, over NCCL when every rank has a GPU of its own
// and over MPI through host copies otherwise.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "core/watched_wait.hpp"
#include "dist/communicator.hpp"
#include "dist/topology.hpp"
#include "engine/exchange.hpp"
#include "engine/exchange_groups.hpp"
#include "engine/step_graphs.hpp"
#include "engine/step_marks.hpp"
#include "engine/step_plan.hpp"
#include "exec/step_space.hpp"
#include "exec/workspace.hpp"
#include "hash/token_batch.hpp"
#include "store/cached_store.hpp"
#include "store/placement.hpp"
#include "store/row_store.hpp"

namespace pleshard {

struct GpuBinding;
class StreamFence;

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

struct EngineOptions {
  OutDtype dtype = OutDtype::bf16;
  StorageTier tier = StorageTier::host;  // every table's, unless `placement` says otherwise
  // Each table's tier, in table order (store/placement.hpp); empty: every table on `tier`.
  std::vector<StorageTier> placement;
  // Place the tables by what every rank has (store/auto_placement.hpp) instead, and give the
  // GPU memory they leave to a row cache in front of those not on the device, unless `cache`
  // sizes one.
  bool auto_placement = false;
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
  // How the ETP group's rows reach the ranks that need them (choose_exchange).
  ExchangeStrategy exchange = ExchangeStrategy::automatic;
  // A step that makes no progress for this long (a stalled GPU, a stalled or failed peer)
  // ends the job on every rank (abort_job): a stream that will not drain cannot be unwound.
  double collective_timeout_s = 600;
  CacheOptions cache;
  // The disk tier's reads: through the page cache, or past it (O_DIRECT).
  PageCache disk_reads = PageCache::use;
  // Output slots K: step s leaves its embeddings in slot s mod K, where they stay while the
  // next K - 1 steps run (a consumer keeps a few steps' embeddings without copying them);
  // each slot is a copy of the step's output buffers (in a CUDA graph's bucket, a graph
  // per slot).
  int output_slots = 1;
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
  std::uint64_t bytes = 0;          // the rows' stored bytes this rank read, as the files hold them (0: disk tier)
  int shared_ranks = 1;             // the ranks of my node sharing my host-tier rows (1: none)
  std::uint64_t peak_resident = 0;  // the process's peak resident memory after the load
  double cache_fill_seconds = 0;    // the row cache's static part read from the slow tier, after it
};

// The load, and where the engine's steps spent their time, on the step space's stream, and
// their spread.
struct EngineStats {
  TableLoad load;
  PhaseTimes times;
  std::int64_t steps = 0;
  std::int64_t graph_replays = 0;
  std::int64_t graphs_captured = 0;
  std::vector<double> step_seconds;  // every step's, in order
};

class PleEngine {
 public:
  // Collective over comms.world(): reads each rank's row ranges of every table. Tiers other
  // than host need a checkpoint opened for independent reads. InputError on every rank,
  // before anything is allocated, when the tables do not fit the tier's memory.
  PleEngine(const Communicators& comms, const ModelConfig& config, const PleCheckpoint& checkpoint,
            const EngineOptions& options);
  ~PleEngine();
  PleEngine(const PleEngine&) = delete;
  PleEngine& operator=(const PleEngine&) = delete;

  // Enqueues my DP rank's step (the same batch on its TP ranks; may be empty); collective
  // over my ETP group. `group_tokens`: every DP rank of my ETP group's token count this
  // step, in slot order, where the caller knows them (the batch job's schedule is
  // deterministic; every rank of the group passes the same); otherwise the group agrees on
  // them with one host collective. At most two steps are in flight: a forward() first waits
  // for the step before the last.
  StepOutput forward(const TokenBatch& batch, std::span<const std::int64_t> group_tokens = {});
  // Returns when the last step is done. Watched: a collective that fails, or makes no
  // progress within the timeout, aborts the engine's communicators and throws SystemError.
  void wait();
  // Returns when the engine's stream has passed `mark` (recorded on it after a step),
  // watched as wait() is.
  void wait_until(const SpaceEvent& mark);
  // The next step waits on the GPU for `event` (a cudaEvent_t a consumer of the last
  // step's output recorded after its reads).
  void wait_for(void* event);
  // A consumer reads `out` on `stream` (a cudaStream_t; 1 and 2 the legacy and per-thread
  // default streams): `stream` waits on the GPU for the step, and the step that next writes
  // out's slot waits for the work enqueued on `stream` by the time that step is enqueued.
  // No host wait; nothing to order on the host tier.
  void share_with(const StepOutput& out, void* stream);

  // Switches CUDA graph replay on or off for later steps; InputError where the layout or
  // tier does not allow graphs (EngineOptions::cuda_graphs).
  void use_cuda_graphs(bool on);

  [[nodiscard]] const EngineStats& stats() const { return stats_; }
  // The communicators that carry collectives, with the groups' names ("etp", "etp_dp", "tp", and the owner exchanges'
  // "etp host", "etp_node", "etp_cross" and their host ones); groups of one rank have none.
  [[nodiscard]] std::vector<std::pair<std::string, const Communicator*>> communicators() const;
  [[nodiscard]] const Topology& topology() const { return topology_; }
  [[nodiscard]] OutDtype dtype() const { return options_.dtype; }
  // Where each table lives (every table on one tier unless EngineOptions::placement said otherwise).
  [[nodiscard]] const Placement& placement() const { return placement_; }
  [[nodiscard]] const PlacementReport& placement_report() const { return placement_report_; }
  [[nodiscard]] const char* exchange() const { return exchange_->name(); }
  // What the exchange moved, this rank, every step so far (CUDA graph replays included).
  [[nodiscard]] const ExchangeTraffic& traffic() const { return exchange_->traffic(); }
  // "mpi", "nccl", "mpi-staged" (MPI through host copies of GPU buffers), or "none" (disk).
  [[nodiscard]] const char* backend() const { return backend_; }
  // Why GPU buffers go through host copies ("GPUs are shared: ..."); empty when they do not.
  [[nodiscard]] const std::string& backend_note() const { return backend_note_; }
  [[nodiscard]] std::size_t token_bytes() const;  // bytes of one token's embedding per layer
  [[nodiscard]] int num_layers() const { return static_cast<int>(specs_.size()); }
  [[nodiscard]] StepSpace& space() const { return *space_; }
  [[nodiscard]] int output_slots() const { return options_.output_slots; }
  // The memory every step's views point into, for holders whose views may outlive the engine
  // (a Python array read after its engine was closed): freed when the engine and the last
  // holder have let go. The engine's streams and tables are not kept; only the memory is.
  [[nodiscard]] std::shared_ptr<const void> output_memory() const;
  // The CUDA device the engine's steps run on; -1 on the host.
  [[nodiscard]] int gpu() const { return gpu_; }
  // Per layer, the row cache in front of the tier (empty without one); waits for the space.
  [[nodiscard]] std::vector<CacheReport> cache() const;

 private:
  void open_communicators(const Communicators& comms, const GpuBinding& gpus, ExchangeStrategy strategy);
  [[nodiscard]] std::int64_t slot_tokens(const TokenBatch& batch, std::span<const std::int64_t> group_tokens);
  [[nodiscard]] std::int64_t bucket_for(std::int64_t tokens) const;
  // `tokens` rounded up to a whole number of slot_multiple_.
  [[nodiscard]] std::int64_t padded_slot(std::int64_t tokens) const {
    return (tokens + slot_multiple_ - 1) / slot_multiple_ * slot_multiple_;
  }
  void settle();
  // Tests: the fault plan's stall (core/fault_plan.hpp) at its step and rank, as a hung
  // kernel or peer would stall the GPU stream.
  void inject_stall();

  Topology topology_;
  EngineOptions options_;
  Placement placement_;
  PlacementReport placement_report_;
  const char* backend_ = "mpi";
  std::string backend_note_;
  std::vector<TableSpec> specs_;  // hashing specs (checkpoint buffers applied)
  // Destroyed in reverse: exchange, store, plan and communicators before the space they use.
  // The space and workspace are shared with output_memory()'s holders, who may outlive the engine.
  std::shared_ptr<StepSpace> space_;
  std::unique_ptr<Communicator> control_;  // host memory, my ETP group's ranks with my TP rank
  ExchangeGroups groups_;                  // those the exchange strategy declares
  std::shared_ptr<Workspace> workspace_;
  std::unique_ptr<RowStore> store_;
  std::vector<CachedStore*> caches_;  // per layer: the row cache in front of its table, or null
  std::unique_ptr<StepPlan> plan_;
  std::unique_ptr<Exchange> exchange_;
  std::unique_ptr<StepGraphs> graphs_;   // the steps' CUDA graphs, where they are replayed
  std::unique_ptr<StepMarks> marks_[2];  // the last two steps'
  std::uint64_t next_step_ = 0;
  // Per output slot, the consumer streams (share_with) its next step waits for.
  std::vector<std::vector<void*>> consumers_;
  std::unique_ptr<StreamFence> consumer_fence_;
  int gpu_ = -1;
  std::int64_t slot_multiple_ = 1;  // slots padded to a multiple of this (reduce-scatter over TP)
  EngineStats stats_;
  std::unique_ptr<StallLimitScope> stall_limit_;  // host waits watched while the engine steps
};

}  // namespace pleshard
