#pragma once
// One forward step of every PLE layer on every rank of a layout, as one plan on the step
// space: my DP rank's batch in, my embeddings of every layer out, left where the step
// wrote them (GPU memory for the GPU tiers) for a consumer in the same process to read
// without a copy. Every rank holds only its ETP row range of each table, on the table's tier
// (a disk tier alone reads whole rows on demand instead). Host-tier steps run on the host
// over MPI; GPU tiers run on the rank's GPU, over NCCL when every rank has a GPU of its own
// and over MPI through host copies otherwise.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "core/rank_threads.hpp"
#include "dist/communicator.hpp"
#include "dist/topology.hpp"
#include "engine/engine_options.hpp"
#include "exec/space_event.hpp"
#include "exec/step_space.hpp"
#include "hash/token_batch.hpp"
#include "store/row_store.hpp"

namespace pleshard {

class EngineSession;
class StepRunner;
class StallLimitScope;

// The engine is a session (engine/engine_session.hpp: what lives for the job) and a step
// runner over it (engine/step_runner.hpp: one step after the other).
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
  // for the step before the last. `next`: the batch of the next forward(), where known; a
  // store that fetches ahead begins it inside this one (the next call must then pass the
  // same batch and token counts: SystemError otherwise).
  StepOutput forward(const TokenBatch& batch, std::span<const std::int64_t> group_tokens = {},
                     const NextStep& next = {});
  // forward() in two halves, so that a consumer's work before it reads a table hides the
  // step: start() hands my DP rank's step (as forward() takes it) to a thread of the
  // engine's and returns; wait_table(d, stream) returns table d's embeddings once that table's
  // work is enqueued and has `stream` (a cudaStream_t, as share_with takes it; null: none)
  // wait on the GPU for that work alone; finish() returns the step's output as forward()
  // would. A step whose tables lie on several tiers, in an ETP group of one rank, enqueues
  // each tier's tables as soon as they are decoded, fastest tier first — a device table is
  // read while a pinned table's rows are still gathered on the host —; any other step
  // enqueues its tables together. Between start() and finish() only wait_table() is taken
  // (SystemError for the rest); where several ranks step, MPI must allow calls from the
  // engine's thread (MPI_THREAD_SERIALIZED or more: InputError otherwise).
  void start(const TokenBatch& batch, std::span<const std::int64_t> group_tokens = {});
  EmbeddingView wait_table(int table, void* stream = nullptr);
  StepOutput finish();

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

  [[nodiscard]] const EngineStats& stats() const;
  // The communicators that carry collectives, with the groups' names ("etp", "etp_dp", "tp", and the owner exchanges'
  // "etp host", "etp_node", "etp_cross" and their host ones); groups of one rank have none.
  [[nodiscard]] std::vector<std::pair<std::string, const Communicator*>> communicators() const;
  [[nodiscard]] const Topology& topology() const;
  [[nodiscard]] OutDtype dtype() const;
  // Where each table lives (every table on one tier unless EngineOptions::placement said otherwise).
  [[nodiscard]] const Placement& placement() const;
  [[nodiscard]] const PlacementReport& placement_report() const;
  [[nodiscard]] const char* exchange() const;
  // What the exchange moved, this rank, every step so far (CUDA graph replays included).
  [[nodiscard]] ExchangeTraffic traffic() const;
  // "mpi", "nccl", "mpi-staged" (MPI through host copies of GPU buffers), or "none" (disk).
  [[nodiscard]] const char* backend() const;
  // Why GPU buffers go through host copies ("GPUs are shared: ..."); empty when they do not.
  [[nodiscard]] const std::string& backend_note() const;
  // This rank's host threads and where their count came from (core/rank_threads.hpp).
  [[nodiscard]] const RankThreads& threads() const;
  [[nodiscard]] std::size_t token_bytes() const;  // bytes of one token's embedding per layer
  [[nodiscard]] int num_layers() const;
  [[nodiscard]] StepSpace& space() const;
  [[nodiscard]] int output_slots() const;
  // The memory every step's views point into, for holders whose views may outlive the engine
  // (a Python array read after its engine was closed): freed when the engine and the last
  // holder have let go. The engine's streams and tables are not kept; only the memory is.
  [[nodiscard]] std::shared_ptr<const void> output_memory() const;
  // The CUDA device the engine's steps run on; -1 on the host.
  [[nodiscard]] int gpu() const;
  // Per layer, the row cache in front of the tier (empty without one); waits for the space.
  [[nodiscard]] std::vector<CacheReport> cache() const;
  // How the lookups of pinned tables were read so far (EngineOptions::host_reads), one
  // count per table and step; zeros without pinned tables.
  [[nodiscard]] RowStore::HostReadCounts host_reads() const;

 private:
  // What lives for the job (space, placement, stores, communicators), then its steps; the
  // steps go first.
  std::unique_ptr<EngineSession> session_;
  std::unique_ptr<StepRunner> runner_;
  std::unique_ptr<StallLimitScope> stall_limit_;  // host waits watched while the engine steps
};

}  // namespace pleshard
