#include "engine/ple_engine.hpp"

#include <mpi.h>

#include "core/error.hpp"
#include "dist/staged_communicator.hpp"
#include "store/host_table.hpp"
#include "store/table_factory.hpp"
#if PLESHARD_HAVE_CUDA
#include "dist/gpu_binding.hpp"
#include "exec/cuda_step_space.hpp"
#endif
#if PLESHARD_HAVE_NCCL
#include "dist/nccl_communicator.hpp"
#endif

namespace pleshard {

namespace {

// The host for the host tier; otherwise this rank's GPU (chosen collectively), with
// `own_gpu` telling whether every rank has one to itself.
std::unique_ptr<StepSpace> make_space(const Communicators& comms, StorageTier tier, bool& own_gpu) {
#if PLESHARD_HAVE_CUDA
  if (tier_uses_gpu(tier)) own_gpu = bind_local_gpu(comms);
#else
  (void)comms;
#endif
  return make_tier_space(tier);
}

}  // namespace

PleEngine::PleEngine(const Communicators& comms, const ModelConfig& config, const PleCheckpoint& checkpoint,
                     OutDtype dtype, StorageTier tier)
    : topology_(comms.topology()),
      dtype_(dtype),
      tier_(tier),
      space_(make_space(comms, tier, own_gpu_)),
      batch_(*space_),
      ids_(*space_) {
  if (tier != StorageTier::host && checkpoint.reads_collectively())
    throw SystemError(checkpoint.path() + ": the " + std::string(to_string(tier)) +
                      " tier needs a checkpoint opened for independent reads");
  control_ = std::make_unique<MpiCommunicator>(comms.etp_dp());
  if (space_->on_device()) {
#if PLESHARD_HAVE_NCCL
    if (own_gpu_) {
      const cudaStream_t stream = stream_of(*space_);
      etp_ = std::make_unique<NcclCommunicator>(comms.etp(), stream);
      etp_dp_ = std::make_unique<NcclCommunicator>(comms.etp_dp(), stream);
      tp_ = std::make_unique<NcclCommunicator>(comms.tp(), stream);
      backend_ = "nccl";
    }
#endif
#if PLESHARD_HAVE_CUDA
    if (!etp_) {
      etp_ = std::make_unique<StagedCommunicator>(std::make_unique<MpiCommunicator>(comms.etp()), *space_);
      etp_dp_ = std::make_unique<StagedCommunicator>(std::make_unique<MpiCommunicator>(comms.etp_dp()), *space_);
      tp_ = std::make_unique<StagedCommunicator>(std::make_unique<MpiCommunicator>(comms.tp()), *space_);
      backend_ = "mpi-staged";
    }
#endif
  } else {
    etp_ = std::make_unique<MpiCommunicator>(comms.etp());
    etp_dp_ = std::make_unique<MpiCommunicator>(comms.etp_dp());
    tp_ = std::make_unique<MpiCommunicator>(comms.tp());
  }

  for (const auto& derived : derive_layer_specs(config)) {
    const PleTableInfo& info = checkpoint.table(derived.ple_index);
    specs_.push_back(hashing_spec(derived, info, checkpoint.path()));
    hash_params_.push_back(make_hash_params(specs_.back()));
    const RowRange range = balanced_range(info.layout.rows, topology_.etp, topology_.etp_rank());
    tables_.push_back(make_table_tier(tier, checkpoint, derived.ple_index, range, *space_));
  }
  const int layers = static_cast<int>(specs_.size());
  if (tier == StorageTier::disk) {
    exchange_ = std::make_unique<LocalExchange>(*space_, topology_, layers);
  } else {
    exchange_ = std::make_unique<GatherReduceExchange>(*space_, ExchangeComms{*etp_, *etp_dp_, *tp_, *control_},
                                                       topology_, layers);
  }
}

PleEngine::~PleEngine() {
  // Work still queued on the space's stream may use the buffers about to be freed.
  try {
    space_->synchronize();
  } catch (...) {
  }
}

std::size_t PleEngine::token_bytes() const {
  const auto& spec = specs_.front();
  return static_cast<std::size_t>(spec.total_heads()) * static_cast<std::size_t>(spec.head_dim) *
         kernels::out_bytes(dtype_);
}

std::vector<const Communicator*> PleEngine::communicators() const { return {etp_.get(), etp_dp_.get(), tp_.get()}; }

void PleEngine::forward(const TokenBatch& batch, std::vector<ExchangeResult>& out) {
  out.resize(specs_.size());
  double t0 = MPI_Wtime();
  // The batch's three arrays, packed into one buffer of the space.
  const std::size_t tokens = batch.tokens.size();
  const std::size_t bounds = batch.query_start_loc.size();
  const std::size_t context = batch.context.size();
  batch_.reserve((tokens + bounds + context + 1) * sizeof(std::int64_t));
  auto* base = batch_.as<std::int64_t>();
  space_->copy_from_host(base, batch.tokens.data(), tokens * sizeof(std::int64_t));
  space_->copy_from_host(base + tokens, batch.query_start_loc.data(), bounds * sizeof(std::int64_t));
  space_->copy_from_host(base + tokens + bounds, batch.context.data(), context * sizeof(std::int64_t));
  kernels::NgramBatchView view = batch.view();
  view.tokens = base;
  view.query_start_loc = base + tokens;
  view.context = base + tokens + bounds;
  times_.hash += MPI_Wtime() - t0;

  exchange_->begin_step(batch.num_tokens());
  for (std::size_t d = 0; d < specs_.size(); ++d) {
    t0 = MPI_Wtime();
    const int heads = specs_[d].total_heads();
    ids_.reserve(std::max<std::size_t>(1, tokens * static_cast<std::size_t>(heads)) * sizeof(std::int64_t));
    space_->hash(hash_params_[d], view, ids_.as<std::int64_t>());
    times_.hash += MPI_Wtime() - t0;
    exchange_->start(static_cast<int>(d), ids_.as<std::int64_t>(), heads, *tables_[d], dtype_, times_);
  }
  for (std::size_t d = 0; d < specs_.size(); ++d)
    exchange_->finish(static_cast<int>(d), *tables_[d], dtype_, out[d], times_);
}

}  // namespace pleshard
