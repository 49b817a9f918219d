#pragma once
// One forward step of every PLE layer on every rank of a layout: hash my DP rank's tokens,
// exchange, and hand back my embeddings. Every rank holds only its ETP row range of each
// table.

#include <memory>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "dist/communicator.hpp"
#include "dist/topology.hpp"
#include "engine/exchange.hpp"
#include "hash/token_batch.hpp"
#include "store/host_table.hpp"

namespace pleshard {

class PleEngine {
 public:
  // Collective over comms.world(): reads each rank's row ranges of every table.
  PleEngine(const Communicators& comms, const ModelConfig& config, const PleCheckpoint& checkpoint,
            OutDtype dtype);

  // My DP rank's step (the same batch on its TP ranks; may be empty). Collective over my
  // ETP group. out[d] receives layer d's embeddings of my tokens (or my sequence slice).
  void forward(const TokenBatch& batch, std::vector<ExchangeResult>& out);

  [[nodiscard]] const PhaseTimes& times() const { return times_; }
  [[nodiscard]] std::vector<const Communicator*> communicators() const;
  [[nodiscard]] const Topology& topology() const { return topology_; }
  [[nodiscard]] OutDtype dtype() const { return dtype_; }
  [[nodiscard]] std::size_t token_bytes() const;  // bytes of one token's embedding per layer
  [[nodiscard]] int num_layers() const { return static_cast<int>(specs_.size()); }

 private:
  Topology topology_;
  OutDtype dtype_;
  std::vector<PleLayerSpec> specs_;  // hashing specs (checkpoint buffers applied)
  std::vector<kernels::NgramHashParams> hash_params_;  // the kernels' view of specs_
  std::vector<std::unique_ptr<HostTable>> tables_;
  MpiCommunicator etp_;
  MpiCommunicator etp_dp_;
  MpiCommunicator tp_;
  std::unique_ptr<Exchange> exchange_;
  PhaseTimes times_;
  std::vector<std::int64_t> ids_;
};

}  // namespace pleshard
