#include "engine/ple_engine.hpp"

#include <mpi.h>

#include "core/error.hpp"
#include "dist/communicator_factory.hpp"
#include "store/host_table.hpp"
#include "store/table_factory.hpp"
#if PLESHARD_HAVE_CUDA
#include "dist/gpu_binding.hpp"
#include "exec/cuda_graph.hpp"
#include "exec/cuda_step_space.hpp"
#endif
#if PLESHARD_HAVE_NCCL
#include "dist/nccl_communicator.hpp"
#endif

namespace pleshard {

#if PLESHARD_HAVE_CUDA
class GraphHolder {
 public:
  GraphHolder(cudaStream_t stream, const std::function<void()>& work) : graph(stream, work) {}
  CudaGraph graph;
};
#else
class GraphHolder {};
#endif

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
  open_communicators(comms);
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

void PleEngine::open_communicators(const Communicators& comms) {
  control_ = std::make_unique<MpiCommunicator>(comms.etp());
  // GPU buffers go over NCCL when every rank has a GPU of its own, else through host
  // copies over MPI. The disk tier exchanges nothing (every rank reads whole rows).
  const bool device_data = space_->on_device() && tier_ != StorageTier::disk;
  const CollectiveBackend backend = !device_data ? CollectiveBackend::mpi
                                    : own_gpu_ && backend_built(CollectiveBackend::nccl) ? CollectiveBackend::nccl
                                                                                          : CollectiveBackend::mpi_staged;
  etp_ = make_communicator(backend, comms.etp(), *space_);
  etp_dp_ = make_communicator(backend, comms.etp_dp(), *space_);
  tp_ = make_communicator(backend, comms.tp(), *space_);
  if (backend == CollectiveBackend::nccl) nccl_ = {etp_.get(), etp_dp_.get(), tp_.get()};
  backend_ = tier_ == StorageTier::disk ? "none" : to_string(backend);
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
  if (graph_) {
    // Every rank of the ETP group learns whether all of them fit before anyone replays.
    std::int64_t need[2] = {batch.num_tokens(), batch.num_requests()};
    control_->all_reduce(need, 2, Element::i64, ReduceOp::max);
    if (need[0] > graph_tokens_ || need[1] > graph_requests_)
      throw InputError("a step of " + std::to_string(need[0]) + " tokens and " + std::to_string(need[1]) +
                       " requests exceeds the captured CUDA graph's " + std::to_string(graph_tokens_) + " and " +
                       std::to_string(graph_requests_));
#if PLESHARD_HAVE_CUDA
    const double t0 = MPI_Wtime();
    (void)load_batch(batch, graph_tokens_, graph_requests_ + 1);  // + the padding request
    graph_->graph.launch(stream_of(*space_));
    for (std::size_t d = 0; d < specs_.size(); ++d)
      exchange_->collect(static_cast<int>(d), batch.num_tokens(), out[d]);
    times_.graph += MPI_Wtime() - t0;
#endif
    return;
  }

  double t0 = MPI_Wtime();
  const kernels::NgramBatchView view = load_batch(batch, batch.num_tokens(), batch.num_requests());
  times_.hash += MPI_Wtime() - t0;

  exchange_->begin_step(batch.num_tokens());
  enqueue_step(view, batch.num_tokens());
  t0 = MPI_Wtime();
  for (std::size_t d = 0; d < specs_.size(); ++d) exchange_->collect(static_cast<int>(d), batch.num_tokens(), out[d]);
  times_.collect += MPI_Wtime() - t0;
}

void PleEngine::enqueue_step(const kernels::NgramBatchView& view, std::int64_t tokens) {
  for (std::size_t d = 0; d < specs_.size(); ++d) {
    const double t0 = MPI_Wtime();
    const int heads = specs_[d].total_heads();
    ids_.reserve(std::max<std::size_t>(1, static_cast<std::size_t>(tokens * heads)) * sizeof(std::int64_t));
    space_->hash(hash_params_[d], view, ids_.as<std::int64_t>());
    times_.hash += MPI_Wtime() - t0;
    exchange_->start(static_cast<int>(d), ids_.as<std::int64_t>(), heads, *tables_[d], dtype_, times_);
  }
  for (std::size_t d = 0; d < specs_.size(); ++d) exchange_->finish(static_cast<int>(d), *tables_[d], dtype_, times_);
}

kernels::NgramBatchView PleEngine::load_batch(const TokenBatch& batch, std::int64_t tokens, std::int64_t requests) {
  const auto m = static_cast<std::size_t>(tokens);
  const auto r = static_cast<std::size_t>(requests);
  const auto width = static_cast<std::size_t>(batch.context_width);
  // Packed as tokens, r + 1 boundaries, r contexts; padding tokens and contexts are zeros.
  packed_.assign(m + (r + 1) + r * width, 0);
  std::int64_t* packed_tokens = packed_.data();
  std::int64_t* bounds = packed_tokens + m;
  std::int64_t* context = bounds + r + 1;
  std::copy(batch.tokens.begin(), batch.tokens.end(), packed_tokens);
  std::copy(batch.query_start_loc.begin(), batch.query_start_loc.end(), bounds);
  // The request after the batch's last holds the padding tokens; any after it are empty.
  std::fill(bounds + batch.num_requests() + 1, bounds + r + 1, tokens);
  std::copy(batch.context.begin(), batch.context.end(), context);
  batch_.reserve(packed_.size() * sizeof(std::int64_t));  // graph steps: the same size every step
  space_->copy_from_host(batch_.data(), packed_.data(), packed_.size() * sizeof(std::int64_t));
  const auto* base = batch_.as<std::int64_t>();
  return {base, tokens, base + m, requests, base + m + r + 1};
}

void PleEngine::set_capturing(bool capturing) {
#if PLESHARD_HAVE_NCCL
  for (Communicator* c : nccl_) static_cast<NcclCommunicator*>(c)->set_capturing(capturing);
#else
  (void)capturing;
#endif
}

void PleEngine::capture_graph(std::int64_t max_tokens, std::int64_t max_requests) {
  if (tier_ != StorageTier::device && tier_ != StorageTier::pinned)
    throw InputError(std::string("CUDA graphs need the device or pinned tier, not ") + to_string(tier_));
  if (nccl_.empty())
    throw InputError(std::string("CUDA graphs need NCCL with one GPU per rank; collectives here go over ") +
                     backend_);
  if (topology_.sequence_parallel() && topology_.etp > 1)
    throw InputError("CUDA graphs do not support sequence parallelism (ETP = TP > 1)");
  if (max_tokens < 1 || max_requests < 1) throw InputError("CUDA graphs need room for a token and a request");
#if PLESHARD_HAVE_CUDA
  graph_.reset();
  graph_tokens_ = max_tokens;
  graph_requests_ = max_requests;
  const kernels::NgramBatchView view =
      load_batch(TokenBatch(specs_.front().ngram_size), graph_tokens_, graph_requests_ + 1);
  auto step = [&] {
    exchange_->begin_fixed_step(max_tokens);
    enqueue_step(view, max_tokens);
  };
  // A first step allocates every buffer at its captured size; the capture then records
  // the same work at the same addresses.
  const PhaseTimes before = times_;
  step();
  space_->synchronize();
  set_capturing(true);
  try {
    graph_ = std::make_unique<GraphHolder>(stream_of(*space_), step);
  } catch (...) {
    set_capturing(false);
    throw;
  }
  set_capturing(false);
  times_ = before;
#endif
}

}  // namespace pleshard
