#include "engine/ple_engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <thread>
#include <utility>

#include <mpi.h>

#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "core/host_memory.hpp"
#include "core/log.hpp"
#include "core/mpi_check.hpp"
#include "core/watched_wait.hpp"
#include "dist/communicator_factory.hpp"
#include "dist/gpu_binding.hpp"
#include "engine/table_placement.hpp"
#include "engine/table_stores.hpp"
#include "exec/stream_order.hpp"
#include "profile/row_profile.hpp"
#include "store/tier_memory.hpp"
#if PLESHARD_HAVE_CUDA
#include "exec/cuda_step_space.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/fault.hpp"
#endif

namespace pleshard {

namespace {

// This rank's GPU (chosen collectively, `gpus` telling whether every rank has one to itself)
// where `on_gpu`, else the host.
std::unique_ptr<StepSpace> make_space(const Communicators& comms, bool on_gpu, GpuBinding& gpus) {
#if PLESHARD_HAVE_CUDA
  if (on_gpu) {
    gpus = bind_local_gpu(comms.world());
    return make_cuda_space();
  }
#else
  (void)comms;
  (void)gpus;
  (void)on_gpu;
#endif
  return make_host_space();
}

// The ranks of my node (a machine; PLESHARD_RANKS_PER_NODE's blocks where set) that hold
// the same row ranges as I do — my ETP rank's — where tables in host memory (the host and
// pinned tiers) are shared.
class HostShare {
 public:
  HostShare(const Communicators& comms, bool wanted) {
    if (!wanted) return;
    const Topology& t = comms.topology();
    int per_node = 0;
    try {
      per_node = ranks_per_node_override();
    } catch (const InputError&) {  // refused where the hierarchical exchange uses it
    }
    const int color = t.etp_rank() + t.etp * (per_node > 0 ? t.rank / per_node : 0);
    PLESHARD_MPI_CHECK(MPI_Comm_split(comms.node(), color, t.rank, &comm_));
    PLESHARD_MPI_CHECK(MPI_Comm_size(comm_, &ranks_));
    PLESHARD_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  }
  ~HostShare() { drop(); }
  // No sharing after all (a placement that keeps no rows in host memory).
  void drop() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    ranks_ = 1;
    rank_ = 0;
  }
  HostShare(const HostShare&) = delete;
  HostShare& operator=(const HostShare&) = delete;

  [[nodiscard]] MPI_Comm comm() const { return ranks_ > 1 ? comm_ : MPI_COMM_NULL; }
  [[nodiscard]] int ranks() const { return ranks_; }
  [[nodiscard]] bool reader() const { return rank_ == 0; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int ranks_ = 1;
  int rank_ = 0;
};

int size_of(MPI_Comm comm) {
  int n = 1;
  MPI_Comm_size(comm, &n);
  return n;
}

int rank_in(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

// The hierarchical exchange needs each ETP group as node-major blocks of one size: agreed
// over the world, before any table is loaded.
void check_node_layout(const Communicators& comms) {
  collective_try(comms.world(), [&] {
    (void)ranks_per_node_override();  // a malformed override is refused here, with its value
    const int per_node = size_of(comms.etp_node());
    const int nodes = size_of(comms.etp_cross());
    const Topology& t = comms.topology();
    if (per_node * nodes != t.etp || t.etp_rank() != rank_in(comms.etp_cross()) * per_node + rank_in(comms.etp_node()))
      throw InputError("--exchange hierarchical: ETP group " + std::to_string(t.etp_group()) +
                       " is not node-major blocks of one size (" + std::to_string(per_node) +
                       " of its ranks on world rank " + std::to_string(t.rank) +
                       "'s node; nodes are MPI's shared-memory domains, or PLESHARD_RANKS_PER_NODE consecutive ranks)");
  });
}

}  // namespace

PleEngine::PleEngine(const Communicators& comms, const ModelConfig& config, const PleCheckpoint& checkpoint,
                     const EngineOptions& options)
    : topology_(comms.topology()), options_(options) {
  if (options.max_tokens < 1) throw InputError("the engine needs room for at least one token per step");
  if (options.output_slots < 1 || options.output_slots > k_max_output_slots)
    throw InputError("output_slots " + std::to_string(options.output_slots) + ": must be from 1 to " +
                     std::to_string(k_max_output_slots));
  if (!(options.collective_timeout_s >= k_min_collective_timeout_s &&
        options.collective_timeout_s <= k_max_collective_timeout_s))
    throw InputError("--collective-timeout " + std::to_string(options.collective_timeout_s) + ": must be from " +
                     std::to_string(static_cast<int>(k_min_collective_timeout_s)) + " to " +
                     std::to_string(static_cast<int>(k_max_collective_timeout_s)) + " seconds");
  if (!options.cache.profile.empty() && !options.cache.enabled() && !options.auto_placement)
    throw InputError("--cache-profile " + options.cache.profile.string() +
                     ": needs a cache (--cache-rows or --cache-gb)");
  const int tables = static_cast<int>(checkpoint.tables().size());
  if (!options.placement.empty() && static_cast<int>(options.placement.size()) != tables)
    throw SystemError("the engine's placement names " + std::to_string(options.placement.size()) + " tables of " +
                      std::to_string(tables));
  GpuBinding gpus;
  // The step's space: the GPU where a table's tier decodes there (an automatic placement
  // uses the GPU wherever there is one), else the host.
  const bool on_gpu = options.auto_placement ? gpu_available() : asked_placement(options, tables).uses_gpu();
  space_ = make_space(comms, on_gpu, gpus);
  space_->set_stall_timeout(options.collective_timeout_s);
  if (space_->on_device()) {
    gpu_ = current_gpu();
    consumer_fence_ = std::make_unique<StreamFence>();
  }
  consumers_.resize(static_cast<std::size_t>(options.output_slots));
  std::vector<kernels::NgramHashParams> params;
  std::vector<RowRange> shards;
  std::vector<TableLayout> layouts;
  std::vector<int> heads;
  for (const auto& derived : derive_table_specs(config)) {
    const PleTableInfo& info = checkpoint.table(derived.ple_index);
    layouts.push_back(info.layout);
    specs_.push_back(hashing_spec(derived, info, checkpoint.path()));
    params.push_back(make_hash_params(specs_.back()));
    shards.push_back(balanced_range(info.layout.rows, topology_.etp, topology_.etp_rank()));
    heads.push_back(specs_.back().total_heads());
  }
  if (specs_.size() > static_cast<std::size_t>(kernels::k_max_step_layers))
    throw InputError(config.source + ": " + std::to_string(specs_.size()) + " PLE layers; a step decodes at most " +
                     std::to_string(kernels::k_max_step_layers));
  // The profile's tables agree with the checkpoint's, on every rank, before anything is placed or loaded.
  const RowProfile profile = collective_try(comms.world(), [&] {
    return options.cache.profile.empty() ? RowProfile{} : read_row_profile_for(options.cache.profile, checkpoint);
  });
  const std::uint64_t step_memory =
      step_memory_estimate(options, tables, config.total_heads(), config.ple_embed_dim, topology_.edp());
  // The ranks that would keep one copy per node of rows in host memory (host and pinned
  // tiers): the node holds one copy per group, which the automatic placement counts.
  HostShare share(comms, options.share_tables);
  PlacementChoice placed = collective_try(comms.world(), [&] {
    return choose_placement(
        comms.world(), topology_.rank, options,
        {layouts, shards, heads, profile, space_->on_device(),
         checkpoint.kind() != CheckpointKind::synthetic && !options.cuda_graphs, step_memory, share.ranks()});
  });
  placement_ = std::move(placed.placement);
  placement_report_ = std::move(placed.report);
  check_placement(placement_);
  if (space_->on_device() != placement_.uses_gpu() && !placement_.uses(StorageTier::disk))
    throw SystemError("the engine's space and its placement " + placement_.describe() + " disagree");
  const TierCapabilities can = placement_.capabilities();
  if (!can.loads_collectively && checkpoint.reads_collectively())
    throw SystemError(checkpoint.path() + ": the placement " + placement_.describe() +
                      " needs a checkpoint opened for independent reads");
  if (options.cache.enabled() && !can.cacheable)
    throw InputError("a row cache stands in front of the pinned or disk tier, not the " + placement_.describe() +
                     " tier");
  // Whole tables where every rank holds them (the disk tier alone), else my ETP rank's rows.
  std::vector<RowRange> ranges = shards;
  if (can.whole_tables)
    for (std::size_t d = 0; d < ranges.size(); ++d) ranges[d] = {0, layouts[d].rows};
  // Every rank holds whole tables and hashes its own tokens only.
  const bool local = can.whole_tables;
  const ExchangeStrategy strategy = choose_exchange(options.exchange, topology_, local, options.cuda_graphs);
  if (strategy == ExchangeStrategy::hierarchical) check_node_layout(comms);
  open_communicators(comms, gpus, strategy);
  // One copy per node of the rows in host memory (host and pinned tiers), shared by the ranks
  // that hold the same ranges (counted, and read, by the first of them).
  if (!can.in_host_memory) share.drop();
  stats_.load.shared_ranks = share.ranks();
  stats_.load.bytes = 0;
  for (const StorageTier tier : k_storage_tiers) {
    if (!placement_.uses(tier)) continue;
    const std::vector<RowRange> on = ranges_on(placement_, tier, ranges);
    const bool counted = !capabilities_of(tier).in_host_memory || share.reader();
    require_tier_memory(comms.world(), tier, counted ? tier_bytes(tier, layouts, on) : 0);
    stats_.load.bytes += counted ? load_bytes(tier, layouts, on) : 0;
  }
  const double load_start = MPI_Wtime();
  const double cache_bytes_asked =
      options.cache.gb > 0 ? options.cache.gb * 1e9 : static_cast<double>(placement_report_.cache_bytes);
  TableStores stores = make_table_stores({placement_, checkpoint, ranges, *space_, options.disk_reads, share.comm(),
                                          options.cache.rows, cache_bytes_asked, &profile, options.cache.static_share});
  store_ = std::move(stores.store);
  caches_ = stores.caches;  // stores.caches and cache_rows stay for the memory check below
  stats_.load.seconds = MPI_Wtime() - load_start;
  stats_.load.peak_resident = peak_resident_bytes();

  // Reduce-scattered slots split into TP whole shares.
  if (strategy == ExchangeStrategy::reduce_scatter && !topology_.sequence_parallel()) slot_multiple_ = topology_.tp;
  const std::int64_t max_slot = padded_slot(options.max_tokens);
  const PlanShape shape{static_cast<int>(specs_.size()),
                        config.total_heads(),
                        config.ngram_size - 1,
                        local ? 1 : topology_.edp(),
                        max_slot,
                        config.token_map != nullptr ? config.token_map->vocab_size() : 0};
  workspace_ = std::make_shared<Workspace>(*space_);
  plan_ = std::make_unique<StepPlan>(*space_, *workspace_, shape);
  const ExchangeComms exchange_comms = groups_.view();
  const ExchangeContext context{*space_,
                                *workspace_,
                                *plan_,
                                *store_,
                                topology_,
                                exchange_comms,
                                options.dtype,
                                config.ple_embed_dim,
                                size_of(comms.etp_node()),
                                options.output_slots};
  exchange_ = make_exchange(strategy, local, context);
  graphs_ =
      std::make_unique<StepGraphs>(*space_, *exchange_, groups_, static_cast<std::int64_t>(shape.heads) * shape.layers);
  // What the step takes grows with --step-tokens, the cache with its size: both checked
  // against the space's memory before they are allocated.
  const StorageTier space_memory = space_->on_device() ? StorageTier::device : StorageTier::host;
  require_tier_memory(comms.world(), space_memory, workspace_->bytes(), 0, "the step workspaces",
                      "a smaller --step-tokens");
  workspace_->allocate();
  plan_->upload(params);
  if (stores.cached())
    require_tier_memory(comms.world(), space_memory, cache_bytes(stores, layouts, exchange_->max_query_ids()), 0,
                        "the row caches", "a smaller --cache-rows or --cache-gb");
  const double fill_start = MPI_Wtime();
  store_->reserve(exchange_->max_query_ids());  // a cache's static part filled here
  if (stores.cached()) stats_.load.cache_fill_seconds = MPI_Wtime() - fill_start;
  for (auto& m : marks_) m = std::make_unique<StepMarks>(*space_);

  options_.cuda_graphs = false;
  use_cuda_graphs(options.cuda_graphs);
  // From here on the job steps: every host wait for peers is watched as the GPU's are.
  stall_limit_ = std::make_unique<StallLimitScope>(options.collective_timeout_s);
}

std::vector<CacheReport> PleEngine::cache() const {
  std::vector<CacheReport> out;
  if (std::all_of(caches_.begin(), caches_.end(), [](const CachedStore* c) { return c == nullptr; })) return out;
  for (std::size_t d = 0; d < caches_.size(); ++d) {
    const CachedStore* cache = caches_[d];
    if (cache == nullptr) {
      out.emplace_back();  // a table on a tier without a cache
      continue;
    }
    const int layer = static_cast<int>(d);
    const CacheCounts counts = cache->counts(layer);
    out.push_back({cache->static_rows(layer), cache->dynamic_rows(layer), counts.hits, counts.misses, counts.repeats});
  }
  return out;
}

void PleEngine::use_cuda_graphs(bool on) {
  if (on) {
    if (!placement_.capabilities().graph_capturable)
      throw InputError("CUDA graphs need the device or pinned tier, not " + placement_.describe());
    if (!groups_.on_space().empty() && std::string(backend_) != "nccl")
      throw InputError(std::string("CUDA graphs need NCCL with one GPU per rank; collectives here go over ") +
                       backend_);
    if (groups_.get(ExchangeGroup::tp) != nullptr && topology_.sequence_parallel())
      throw InputError("CUDA graphs do not support sequence parallelism (ETP = TP > 1)");
    if (!exchange_->capturable())
      throw InputError(std::string("CUDA graphs cannot capture the ") + exchange_->name() +
                       " exchange's steps (it sizes its messages on the host each step); use --exchange "
                       "gather-reduce or reduce-scatter");
#if !PLESHARD_HAVE_CUDA
    throw InputError("CUDA graphs need a CUDA build");
#endif
  }
  options_.cuda_graphs = on;
}

void PleEngine::open_communicators(const Communicators& comms, const GpuBinding& gpus, ExchangeStrategy strategy) {
  // GPU buffers go over NCCL when every rank has a GPU of its own, else through host
  // copies over MPI. A tier of whole tables exchanges nothing (every rank reads whole
  // rows). Groups of one rank need no communicator.
  const bool whole_tables = placement_.capabilities().whole_tables;
  const bool device_data = space_->on_device() && !whole_tables;
  const bool nccl = backend_built(CollectiveBackend::nccl);
  const CollectiveBackend backend = !device_data           ? CollectiveBackend::mpi
                                    : gpus.own_gpu && nccl ? CollectiveBackend::nccl
                                                           : CollectiveBackend::mpi_staged;
  backend_ = whole_tables ? "none" : to_string(backend);
  if (whole_tables) return;
  // The engine's own agreement on a step's slot size, on the host.
  if (size_of(comms.etp_dp()) > 1) control_ = std::make_unique<MpiCommunicator>(comms.etp_dp());
  const std::vector<ExchangeGroup> groups = groups_for(strategy, topology_);
  groups_ = ExchangeGroups(comms, groups, backend, *space_);
  if (backend != CollectiveBackend::mpi_staged || groups_.on_space().empty()) return;
  backend_note_ = (gpus.own_gpu ? std::string("this build has no NCCL") : gpus.why) +
                  "; collectives go over MPI through host copies";
  // Said once per process, not once per engine (bench step makes many).
  static bool said = false;
  if (topology_.rank == 0 && !std::exchange(said, true)) log_warning(backend_note_);
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
         kernels::out_bytes(options_.dtype);
}

std::shared_ptr<const void> PleEngine::output_memory() const {
  // Members destroyed in reverse: the workspace before the space it was allocated in.
  struct Memory {
    std::shared_ptr<StepSpace> space;
    std::shared_ptr<Workspace> workspace;
  };
  return std::make_shared<const Memory>(Memory{space_, workspace_});
}

std::vector<std::pair<std::string, const Communicator*>> PleEngine::communicators() const { return groups_.named(); }

std::int64_t PleEngine::slot_tokens(const TokenBatch& batch, std::span<const std::int64_t> group_tokens) {
  const int slots = plan_->shape().slots;
  std::int64_t most = batch.num_tokens();
  if (slots > 1 && group_tokens.empty()) {
    control_->all_reduce(&most, 1, Element::i64, ReduceOp::max);
  } else if (slots > 1) {
    if (group_tokens.size() != static_cast<std::size_t>(slots) ||
        group_tokens[static_cast<std::size_t>(topology_.etp_dp_rank())] != batch.num_tokens())
      throw SystemError("forward: group_tokens must give the " + std::to_string(slots) +
                        " DP ranks' token counts, this rank's included");
    most = *std::max_element(group_tokens.begin(), group_tokens.end());
  }
  if (most > options_.max_tokens)
    throw InputError("a step of " + std::to_string(most) + " tokens per DP rank exceeds the engine's " +
                     std::to_string(options_.max_tokens));
  most = std::max<std::int64_t>(1, most);
  return padded_slot(most);
}

std::int64_t PleEngine::bucket_for(std::int64_t tokens) const {
  std::int64_t bucket = 1;
  while (bucket < tokens) bucket *= 2;
  const std::int64_t fitted = std::min(bucket, plan_->shape().max_slot_tokens);
  return padded_slot(fitted);
}

StepOutput PleEngine::forward(const TokenBatch& batch, std::span<const std::int64_t> group_tokens) {
  StepMarks& marks = *marks_[next_step_ % 2];
  wait_until(marks.done());  // the step before the last: its buffers are reused now
  const std::int64_t slot = slot_tokens(batch, group_tokens);
  const std::int64_t tokens = batch.num_tokens();
  StepOutput out;
  out.on_device = space_->on_device();
  out.stream = space_->stream();
  out.step = next_step_;
  out.slot = static_cast<int>(next_step_ % static_cast<std::uint64_t>(options_.output_slots));
  // The consumers of the output slot this step writes have enqueued their reads by now.
  for (void* consumer : std::exchange(consumers_[static_cast<std::size_t>(out.slot)], {}))
    consumer_fence_->order(space_->stream(), consumer);
  if (options_.cuda_graphs) {
    const std::int64_t bucket = bucket_for(slot);
    marks.begin(false);
    plan_->load(batch, bucket);
    out.layers = graphs_->launch(bucket, out.slot, tokens);
    stats_.graph_replays = graphs_->replays();
    stats_.graphs_captured = graphs_->captured();
  } else {
    marks.begin(true);
    inject_stall();
    plan_->load(batch, slot);
    marks.mark(StepPhase::load);
    exchange_->run(tokens, out.slot, marks, out.layers);
  }
  marks.end();
  out.ready = marks.done().native();
  ++next_step_;
  ++stats_.steps;
  return out;
}

void PleEngine::inject_stall() {
  const FaultPlan& faults = fault_plan();
  if (!faults.stall_step || *faults.stall_step != static_cast<std::uint64_t>(stats_.steps) ||
      topology_.rank != faults.stall_rank)
    return;
#if PLESHARD_HAVE_CUDA
  if (space_->on_device()) kernels::stall_stream_cuda(stream_of(*space_));
#endif
}

void PleEngine::wait() {
  if (next_step_ > 0) wait_until(marks_[(next_step_ - 1) % 2]->done());
}

void PleEngine::wait_for(void* event) {
#if PLESHARD_HAVE_CUDA
  if (event != nullptr && space_->on_device())
    PLESHARD_CUDA_CHECK(cudaStreamWaitEvent(stream_of(*space_), static_cast<cudaEvent_t>(event), 0));
#else
  (void)event;
#endif
}

void PleEngine::share_with(const StepOutput& out, void* stream) {
  if (!space_->on_device()) return;
  if (out.slot < 0 || out.slot >= options_.output_slots ||
      out.step + static_cast<std::uint64_t>(options_.output_slots) < next_step_)
    throw SystemError("share_with: the output of step " + std::to_string(out.step) + " has been overwritten");
  stream_wait_event(stream, out.ready);
  auto& consumers = consumers_[static_cast<std::size_t>(out.slot)];
  if (std::find(consumers.begin(), consumers.end(), stream) == consumers.end()) consumers.push_back(stream);
}

void PleEngine::wait_until(const SpaceEvent& done) {
  const double t0 = MPI_Wtime();
  const std::vector<Communicator*> comms = groups_.on_space();
  while (!done.done()) {
    for (Communicator* c : comms) c->check();
    if (MPI_Wtime() - t0 > options_.collective_timeout_s) {
      // The stream will not drain: unwinding would block in every wait and free below.
      for (Communicator* c : comms) c->abort();
      abort_job("a step made no progress in " + std::to_string(static_cast<int>(options_.collective_timeout_s)) +
                " s (a stalled GPU, or a peer rank stalled or failed); collectives aborted");
    }
    std::this_thread::yield();
  }
  settle();
}

void PleEngine::settle() {
  // In step order, as far as the stream has got.
  for (std::uint64_t step = next_step_ >= 2 ? next_step_ - 2 : 0; step < next_step_; ++step) {
    StepMarks& marks = *marks_[step % 2];
    if (!marks.done().done()) break;
    if (const auto seconds = marks.settle(stats_.times)) stats_.step_seconds.push_back(*seconds);
  }
  for (Communicator* c : groups_.on_space()) c->settle();
}

}  // namespace pleshard
