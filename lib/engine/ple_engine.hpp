#pragma once
// One forward step of every PLE layer on every rank of a layout: hash my DP rank's tokens,
// exchange, and hand back my embeddings. Every rank holds only its ETP row range of each
// table (the disk tier reads whole rows on demand instead). Host-tier steps run on the host
// over MPI; GPU tiers run on the rank's GPU, over NCCL when every rank has a GPU of its
// own and over MPI through host staging otherwise.

#include <memory>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "dist/communicator.hpp"
#include "dist/topology.hpp"
#include "engine/exchange.hpp"
#include "exec/step_space.hpp"
#include "hash/token_batch.hpp"
#include "store/storage_tier.hpp"
#include "store/table_tier.hpp"

namespace pleshard {

class GraphHolder;  // a CUDA graph in CUDA builds

class PleEngine {
 public:
  // Collective over comms.world(): reads each rank's row ranges of every table. Tiers other
  // than host need a checkpoint opened for independent reads.
  PleEngine(const Communicators& comms, const ModelConfig& config, const PleCheckpoint& checkpoint,
            OutDtype dtype, StorageTier tier = StorageTier::host);
  ~PleEngine();
  PleEngine(const PleEngine&) = delete;
  PleEngine& operator=(const PleEngine&) = delete;

  // My DP rank's step (the same batch on its TP ranks; may be empty). Collective over my
  // ETP group. out[d] receives layer d's embeddings of my tokens (or my sequence slice).
  void forward(const TokenBatch& batch, std::vector<ExchangeResult>& out);

  // Captures the step (hash, exchange, lookup of every layer) in a CUDA graph for batches
  // of up to `max_tokens` tokens and `max_requests` requests per DP rank. Every later
  // forward() replays it on a batch padded to that size (the padding's results are
  // dropped) and throws InputError, on every rank of the ETP group alike, for a batch that
  // does not fit. Needs the device or pinned tier over NCCL and no sequence parallelism
  // across ranks. Collective over comms.world().
  void capture_graph(std::int64_t max_tokens, std::int64_t max_requests);
  [[nodiscard]] bool graph_captured() const { return graph_ != nullptr; }

  [[nodiscard]] const PhaseTimes& times() const { return times_; }
  [[nodiscard]] std::vector<const Communicator*> communicators() const;
  [[nodiscard]] const Topology& topology() const { return topology_; }
  [[nodiscard]] OutDtype dtype() const { return dtype_; }
  [[nodiscard]] StorageTier tier() const { return tier_; }
  // "mpi", "nccl", "mpi-staged" (MPI through host copies of GPU buffers), or "none" (disk).
  [[nodiscard]] const char* backend() const { return backend_; }
  [[nodiscard]] std::size_t token_bytes() const;  // bytes of one token's embedding per layer
  [[nodiscard]] int num_layers() const { return static_cast<int>(specs_.size()); }

 private:
  Topology topology_;
  OutDtype dtype_;
  StorageTier tier_;
  const char* backend_ = "mpi";
  std::vector<PleLayerSpec> specs_;  // hashing specs (checkpoint buffers applied)
  std::vector<kernels::NgramHashParams> hash_params_;  // the kernels' view of specs_
  bool own_gpu_ = false;  // every rank drives a GPU of its own (set with space_)
  // Destroyed in reverse: exchange, tables and communicators before the space they use.
  std::unique_ptr<StepSpace> space_;
  std::unique_ptr<Communicator> control_;
  std::unique_ptr<Communicator> etp_;
  std::unique_ptr<Communicator> etp_dp_;
  std::unique_ptr<Communicator> tp_;
  std::vector<std::unique_ptr<TableTier>> tables_;
  std::unique_ptr<Exchange> exchange_;
  std::vector<std::int64_t> packed_;  // the host side of batch_
  SpaceBuffer batch_;  // tokens, query_start_loc and context of the step
  SpaceBuffer ids_;
  PhaseTimes times_;
  // The graph mode: steps of exactly graph_tokens_ tokens and graph_requests_ + 1 requests
  // (the last one holds the padding), at fixed addresses.
  std::int64_t graph_tokens_ = 0;
  std::int64_t graph_requests_ = 0;
  std::vector<Communicator*> nccl_;  // the NcclCommunicators, to switch to capturing
  std::unique_ptr<GraphHolder> graph_;

  void open_communicators(const Communicators& comms);
  // Copies `batch` into batch_ padded to `tokens` tokens and `requests` requests (at least
  // its own counts) and returns its view there.
  [[nodiscard]] kernels::NgramBatchView load_batch(const TokenBatch& batch, std::int64_t tokens,
                                                   std::int64_t requests);
  // Hashes, starts and finishes every layer of a step loaded at `view`.
  void enqueue_step(const kernels::NgramBatchView& view, std::int64_t tokens);
  void set_capturing(bool capturing);
};

}  // namespace pleshard
