#pragma once
// What lives as long as an engine's job: the step space (this rank's GPU, bound
// collectively, or the host), every table's hashing spec, where the tables go and the stores
// that hold them (loaded at construction, a row cache in front where asked), the exchange
// strategy and the communicators it declares, and the checks that everything fits before it
// is allocated. The steps themselves are the step runner's (engine/step_runner.hpp).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <mpi.h>

#include "ckpt/ple_checkpoint.hpp"
#include "core/rank_threads.hpp"
#include "dist/communicator.hpp"
#include "dist/topology.hpp"
#include "engine/engine_options.hpp"
#include "engine/exchange.hpp"
#include "engine/exchange_groups.hpp"
#include "engine/table_stores.hpp"
#include "exec/step_space.hpp"
#include "model/table_spec.hpp"
#include "store/row_store.hpp"

namespace pleshard {

struct GpuBinding;
struct RowProfile;

class EngineSession {
 public:
  // Collective over comms.world(): checks the options, binds the GPU, places the tables and
  // loads each rank's rows of them, opens the exchange's communicators. InputError on every
  // rank, before anything is allocated, when the tables do not fit.
  EngineSession(const Communicators& comms, const ModelConfig& config, const PleCheckpoint& checkpoint,
                const EngineOptions& options);
  ~EngineSession();
  EngineSession(const EngineSession&) = delete;
  EngineSession& operator=(const EngineSession&) = delete;

  [[nodiscard]] const Topology& topology() const { return topology_; }
  [[nodiscard]] const EngineOptions& options() const { return options_; }
  [[nodiscard]] MPI_Comm world() const { return world_; }  // every rank of the job
  // Shared with the holders of a step's output memory, who may outlive the session.
  [[nodiscard]] const std::shared_ptr<StepSpace>& space() const { return space_; }
  [[nodiscard]] int gpu() const { return gpu_; }  // -1 on the host
  // Hashing specs (checkpoint buffers applied) and their kernel parameters, table by table.
  [[nodiscard]] const std::vector<TableSpec>& specs() const { return specs_; }
  [[nodiscard]] const std::vector<kernels::NgramHashParams>& hash_params() const { return params_; }
  // The step's shape as the model gives it: ids a token has per layer (H), positions of
  // context a request carries (N - 1), the token map's entries (0: none), and the values of
  // one token's embedding per layer (H x head_dim).
  [[nodiscard]] int heads() const { return heads_; }
  [[nodiscard]] int context_width() const { return context_width_; }
  [[nodiscard]] std::int64_t token_map_entries() const { return token_map_entries_; }
  [[nodiscard]] std::int64_t width() const { return width_; }
  [[nodiscard]] const Placement& placement() const { return placement_; }
  [[nodiscard]] const PlacementReport& placement_report() const { return placement_report_; }
  [[nodiscard]] ExchangeStrategy strategy() const { return strategy_; }
  // Every rank holds whole tables (the disk tier alone, or a group's rows read in place:
  // StrategyDescriptor::reads_peers) and hashes its own tokens only.
  [[nodiscard]] bool local() const { return local_; }
  [[nodiscard]] const ExchangeGroups& groups() const { return groups_; }
  // Host memory, my ETP group's DP ranks with my TP rank: the agreement on a step's slot
  // size (null where the group has one DP rank, or exchanges nothing).
  [[nodiscard]] Communicator* control() const { return control_.get(); }
  [[nodiscard]] int node_ranks() const { return node_ranks_; }  // my ETP group's ranks on my node
  [[nodiscard]] RowStore& store() const { return *stores_.store; }
  // Per layer: the row cache in front of its table, or null.
  [[nodiscard]] const std::vector<CachedStore*>& caches() const { return stores_.caches; }
  // The bytes the row caches and their staging take for steps of `max_ids` ids a layer (0:
  // no cache).
  [[nodiscard]] std::uint64_t cache_bytes(std::int64_t max_ids) const;
  [[nodiscard]] const char* backend() const { return backend_; }
  [[nodiscard]] const std::string& backend_note() const { return backend_note_; }
  [[nodiscard]] const RankThreads& threads() const { return threads_; }
  [[nodiscard]] const TableLoad& load() const { return load_; }

 private:
  // The ranks of my node that keep one copy of the rows in host memory I hold (the host and
  // pinned tiers): their communicator (null alone), whether I read the copy, how many share it.
  struct SharedRows {
    MPI_Comm comm = MPI_COMM_NULL;
    bool reader = true;
    int ranks = 1;
    bool peers = false;  // the ranks read each other's rows in place: device rows shared too
  };

  // The construction's steps, in order. Every table's hashing spec and layout from the config
  // and checkpoint; my ETP rank's balanced row range of each, returned.
  std::vector<RowRange> read_table_specs(const ModelConfig& config, const PleCheckpoint& checkpoint);
  // Each table's tier, as asked or planned from every rank's memory (collective), and the
  // checks that the placement, checkpoint and cache agree.
  void place_tables(const PleCheckpoint& checkpoint, const std::vector<RowRange>& shards, const RowProfile& profile,
                    int share_ranks);
  void open_communicators(const Communicators& comms, const GpuBinding& gpus);
  // The stores of `ranges` on their tiers, after the check that each tier's memory holds them
  // (collective), the load timed.
  void load_tables(const PleCheckpoint& checkpoint, const std::vector<RowRange>& ranges, const RowProfile& profile,
                   const SharedRows& share);
  // The pages behind the tables in host memory (collective), and the warning for a large
  // one on no huge pages, from rank 0.
  void measure_host_pages();

  Topology topology_;
  EngineOptions options_;
  MPI_Comm world_;
  std::vector<TableSpec> specs_;
  std::vector<kernels::NgramHashParams> params_;
  std::vector<TableLayout> layouts_;
  int heads_ = 1;
  int context_width_ = 0;
  std::int64_t token_map_entries_ = 0;
  std::int64_t width_ = 0;
  Placement placement_;
  PlacementReport placement_report_;
  ExchangeStrategy strategy_ = ExchangeStrategy::gather_reduce;
  bool local_ = false;
  const char* backend_ = "mpi";
  std::string backend_note_;
  int gpu_ = -1;
  int node_ranks_ = 1;
  RankThreads threads_;  // the rank's host threads, a host gather's too (StoreOptions::host_threads)
  TableLoad load_;
  // Destroyed in reverse: stores and communicators before the space they use.
  std::shared_ptr<StepSpace> space_;
  std::unique_ptr<Communicator> control_;
  ExchangeGroups groups_;
  TableStores stores_;
};

}  // namespace pleshard
