#include "engine/ple_engine.hpp"

#include <mpi.h>

#include "kernels/host/ngram_ids_host.hpp"

namespace pleshard {

PleEngine::PleEngine(const Communicators& comms, const ModelConfig& config, const PleCheckpoint& checkpoint,
                     OutDtype dtype)
    : topology_(comms.topology()),
      dtype_(dtype),
      etp_(comms.etp()),
      etp_dp_(comms.etp_dp()),
      tp_(comms.tp()),
      exchange_(std::make_unique<GatherReduceExchange>(etp_, etp_dp_, tp_, comms.topology())) {
  for (const auto& derived : derive_layer_specs(config)) {
    const PleTableInfo& info = checkpoint.table(derived.ple_index);
    specs_.push_back(hashing_spec(derived, info, checkpoint.path()));
    hash_params_.push_back(make_hash_params(specs_.back()));
    const RowRange range = balanced_range(info.layout.rows, topology_.etp, topology_.etp_rank());
    tables_.push_back(std::make_unique<HostTable>(checkpoint, derived.ple_index, range));
  }
}

std::size_t PleEngine::token_bytes() const {
  const auto& spec = specs_.front();
  return static_cast<std::size_t>(spec.total_heads()) * static_cast<std::size_t>(spec.head_dim) *
         kernels::out_bytes(dtype_);
}

std::vector<const Communicator*> PleEngine::communicators() const { return {&etp_, &etp_dp_, &tp_}; }

void PleEngine::forward(const TokenBatch& batch, std::vector<ExchangeResult>& out) {
  out.resize(specs_.size());
  for (std::size_t d = 0; d < specs_.size(); ++d) {
    const PleLayerSpec& spec = specs_[d];
    const double t0 = MPI_Wtime();
    ids_.resize(static_cast<std::size_t>(batch.num_tokens()) * static_cast<std::size_t>(spec.total_heads()));
    kernels::compute_ngram_ids_host(hash_params_[d], batch.view(), ids_.data());
    times_.hash += MPI_Wtime() - t0;
    exchange_->forward(ids_, spec.total_heads(), *tables_[d], dtype_, out[d], times_);
  }
}

}  // namespace pleshard
