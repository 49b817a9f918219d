#include "engine/step_runner.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <utility>

#include <mpi.h>

#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "core/mpi_check.hpp"
#include "core/option_names.hpp"
#include "core/watched_collectives.hpp"
#include "core/worker.hpp"
#include "engine/exchange_strategy.hpp"
#include "engine/table_readiness.hpp"
#include "exec/stream_order.hpp"
#include "kernels/gpu_device.hpp"
#include "store/placement.hpp"
#include "store/storage_tier.hpp"
#include "store/tier_memory.hpp"

namespace pleshard {

namespace {

// ExchangeContext::group_copy: where the ranks read one copy in place, the layers whose tier
// holds the group's rows (not the disk tier's whole tables).
std::vector<bool> group_copy(const EngineSession& session) {
  std::vector<bool> copy;
  if (session.strategy() == ExchangeStrategy::automatic || !descriptor_of(session.strategy()).reads_peers) return copy;
  const Placement& placement = session.placement();
  for (int d = 0; d < placement.tables(); ++d) copy.push_back(!capabilities_of(placement.tier(d)).whole_tables);
  return copy;
}

}  // namespace

StepRunner::StepRunner(EngineSession& session) : session_(session), options_(session.options()) {
  if (session.space()->on_device()) consumer_fence_ = std::make_unique<StreamFence>();
  consumers_.resize(static_cast<std::size_t>(options_.output_slots));
  stats_.load = session.load();
  // Reduce-scattered slots split into TP whole shares.
  const Topology& topology = session.topology();
  if (session.strategy() != ExchangeStrategy::automatic && descriptor_of(session.strategy()).shares_by_tp &&
      !topology.sequence_parallel())
    slot_multiple_ = topology.tp;
  StepSpace& space = *session.space();
  PlanShape shape;
  shape.layers = static_cast<int>(session.specs().size());
  shape.heads = session.heads();
  shape.context_width = session.context_width();
  shape.slots = session.local() ? 1 : topology.edp();
  shape.max_slot_tokens = padded_slot(options_.max_tokens);
  shape.token_map_entries = session.token_map_entries();
  workspace_ = std::make_shared<Workspace>(space);
  readiness_ = std::make_unique<TableReadiness>(space, shape.layers);
  plan_ = std::make_unique<StepPlan>(space, *workspace_, shape);
  const ExchangeContext context{
      space,
      *workspace_,
      *plan_,
      session.store(),
      topology,
      session.groups().view(),
      options_.dtype,
      session.width(),
      session.node_ranks(),
      options_.output_slots,
      options_.owner_gpu_plan_from,
      options_.cuda_graphs ? std::numeric_limits<std::int64_t>::max() : options_.owner_fixed_below,
      readiness_.get(),
      group_copy(session)};
  exchange_ = make_exchange(session.strategy(), session.local(), context);
  graphs_ = std::make_unique<StepGraphs>(space, *plan_, *exchange_, session.groups(),
                                         static_cast<std::int64_t>(shape.heads) * shape.layers);
  // What the step takes grows with --step-tokens — the workspace, and the stores' staging and
  // scratch (the pinned tier's distinct rows, the disk tier's plans and rows, both turns
  // where steps begin ahead) —,
  // the cache with its size: both checked against the space's memory before they are
  // allocated.
  const MemoryKind space_memory = space.on_device() ? MemoryKind::gpu : MemoryKind::host;
  begins_ahead_ = options_.fetch_ahead && !options_.cuda_graphs && exchange_->begins_ahead();
  agree_on_halves();
  require_space_memory(
      session.world(),
      {space_memory, workspace_->bytes() + session.store().step_buffer_bytes(exchange_->max_query_ids())},
      "the step workspaces and staging",
      "a smaller " + option_name(Option::step_tokens) + (begins_ahead_ ? ", or --no-fetch-ahead" : ""));
  // The pinned tier's host gathers stage rows in host memory, beside the tables there.
  require_space_memory(session.world(), {MemoryKind::host, session.store().step_host_bytes(exchange_->max_query_ids())},
                       "the host gathers' page-locked staging",
                       "a smaller " + option_name(Option::step_tokens) + ", " + option_is(Option::host_reads, "uva") +
                           (begins_ahead_ ? ", or --no-fetch-ahead" : ""));
  workspace_->allocate();
  plan_->upload(session.hash_params());
  const std::uint64_t caches = session.cache_bytes(exchange_->max_query_ids());
  if (caches != 0)
    require_space_memory(session.world(), {space_memory, caches}, "the row caches",
                         "a smaller " + option_name(Option::cache_rows) + " or " + option_name(Option::cache_gb));
  const double fill_start = MPI_Wtime();
  session.store().reserve(exchange_->max_query_ids());  // a cache's static part filled here
  if (caches != 0) stats_.load.cache_fill_seconds = MPI_Wtime() - fill_start;
  for (auto& m : marks_) m = std::make_unique<StepMarks>(space);
}

void StepRunner::agree_on_halves() {
  const MPI_Comm world = session_.world();
  // Agreed over the world: a rank whose steps ran whole would run its collectives in another
  // order than its group's.
  int ahead = begins_ahead_ ? 1 : 0;
  watched_allreduce(&ahead, 1, MPI_INT, MPI_MIN, world, "whether every rank's steps begin ahead");
  begins_ahead_ = ahead != 0;
  session_.store().set_fetching_ahead(begins_ahead_);
  if (!begins_ahead_) return;
  // Then the slot sizes at which the next step begins beside a step's decode (the store's
  // answer for them set by set_fetching_ahead): once, for every size a step can have.
  const std::int64_t most = plan_->shape().max_slot_tokens;
  const bool refused = fault_plan().ahead_refused;  // tests: this rank answers apart
  beside_decode_.assign(static_cast<std::size_t>(most) + 1, 0);
  for (std::int64_t slot = 1; slot <= most; ++slot)
    beside_decode_[static_cast<std::size_t>(slot)] =
        exchange_->begins_beside_decode(slot) && !(refused && slot % 4 >= 2) ? 1 : 0;
  watched_allreduce(beside_decode_.data(), static_cast<int>(beside_decode_.size()), MPI_UINT8_T, MPI_MIN, world,
                    "the step sizes at which every rank begins the next step beside a decode");
  // At no size (every step read in place, say): whole steps, and one set of step scratch.
  if (std::find(beside_decode_.begin(), beside_decode_.end(), 1) == beside_decode_.end()) {
    begins_ahead_ = false;
    beside_decode_.clear();
    session_.store().set_fetching_ahead(false);
  }
}

StepRunner::~StepRunner() {
  step_thread_.reset();  // a started step's host work ends first (its failure dropped)
  // Work still queued on the space's stream may use the buffers about to be freed.
  try {
    session_.space()->synchronize();
  } catch (...) {
  }
}

void StepRunner::use_cuda_graphs(bool on) {
  if (on && begun_) throw SystemError("use_cuda_graphs: a step is begun ahead (NextStep); forward it first");
  if (on) {
    const Placement& placement = session_.placement();
    if (!placement.capabilities().graph_capturable)
      throw InputError("CUDA graphs need the device or pinned tier, not " + placement.describe());
    if (!session_.groups().on_space().empty() && std::string(session_.backend()) != "nccl")
      throw InputError(std::string("CUDA graphs need NCCL with one GPU per rank; collectives here go over ") +
                       session_.backend());
    if (session_.groups().get(ExchangeGroup::tp) != nullptr && session_.topology().sequence_parallel())
      throw InputError("CUDA graphs do not support sequence parallelism (ETP = TP > 1)");
    if (!exchange_->capturable())
      throw InputError(std::string("CUDA graphs cannot capture the ") + exchange_->name() +
                       " exchange's steps (it sizes its messages on the host; the owner exchange's fixed-size "
                       "messages, " +
                       option_name(Option::owner_fixed_below) + ", are captured where the GPU plans them); use " +
                       option_is(Option::exchange, "gather-reduce") + " or reduce-scatter");
    if (!kernels::built_with_cuda()) throw InputError("CUDA graphs need a CUDA build");
  }
  cuda_graphs_ = on;
}

std::shared_ptr<const void> StepRunner::output_memory() const {
  // Members destroyed in reverse: the workspace before the space it was allocated in.
  struct Memory {
    std::shared_ptr<StepSpace> space;
    std::shared_ptr<Workspace> workspace;
  };
  return std::make_shared<const Memory>(Memory{session_.space(), workspace_});
}

std::int64_t StepRunner::slot_tokens(const TokenBatch& batch, std::span<const std::int64_t> group_tokens) {
  const int slots = plan_->shape().slots;
  std::int64_t most = batch.num_tokens();
  if (slots > 1 && group_tokens.empty()) {
    session_.control()->all_reduce(&most, 1, Element::i64, ReduceOp::max);
  } else if (slots > 1) {
    if (group_tokens.size() != static_cast<std::size_t>(slots) ||
        group_tokens[static_cast<std::size_t>(session_.topology().etp_dp_rank())] != batch.num_tokens())
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

std::int64_t StepRunner::bucket_for(std::int64_t tokens) const {
  std::int64_t bucket = 1;
  while (bucket < tokens) bucket *= 2;
  const std::int64_t fitted = std::min(bucket, plan_->shape().max_slot_tokens);
  return padded_slot(fitted);
}

StepOutput StepRunner::forward(const TokenBatch& batch, std::span<const std::int64_t> group_tokens,
                               const NextStep& next) {
  const bool begun = begun_.has_value();
  if (begun) check_begun(batch, group_tokens);
  const std::int64_t begun_slot = begun ? begun_->slot : 0;
  begun_.reset();
  StepMarks& marks = *marks_[next_step_ % 2];
  wait_until(marks.done());  // the step before the last: its buffers are reused now
  const std::int64_t slot = begun ? begun_slot : slot_tokens(batch, group_tokens);
  const std::int64_t tokens = batch.num_tokens();
  StepOutput out;
  StepSpace& space = *session_.space();
  out.on_device = space.on_device();
  out.stream = space.stream();
  out.step = next_step_;
  out.slot = static_cast<int>(next_step_ % static_cast<std::uint64_t>(options_.output_slots));
  // The consumers of the output slot this step writes have enqueued their reads by now.
  for (void* consumer : std::exchange(consumers_[static_cast<std::size_t>(out.slot)], {}))
    consumer_fence_->order(space.stream(), consumer);
  if (cuda_graphs_) {
    const std::int64_t bucket = bucket_for(slot);
    marks.begin(false);
    plan_->pack(batch, bucket, next_step_);  // the graph pulls it in, or its decode reads it there
    out.layers = graphs_->launch(bucket, out.slot, tokens);
    stats_.graph_replays = graphs_->replays();
    stats_.graphs_captured = graphs_->captured();
  } else if (!begins_ahead_ || (!begun && next.batch == nullptr)) {
    // Whole, also where nothing is begun ahead of or inside this step (a started step: its
    // store's parts are then fetched and decoded one by one, each part's tables signalled).
    marks.begin(true);
    inject_stall(next_step_);
    plan_->pack(batch, slot, next_step_);
    marks.mark(StepPhase::load);
    try {
      exchange_->run(tokens, out.slot, marks, out.layers);
    } catch (...) {
      session_.store().abandon();  // a part of a placed store submitted and never waited for
      throw;
    }
  } else {
    try {
      run_in_halves(batch, slot, begun, next, marks, out);
    } catch (...) {
      // The steps begun are forgotten: the next forward() begins afresh.
      begun_.reset();
      exchange_->abandon();
      session_.store().abandon();
      throw;
    }
  }
  marks.end();
  out.ready = marks.done().native();
  ++next_step_;
  ++stats_.steps;
  return out;
}

void StepRunner::start(const TokenBatch& batch, std::span<const std::int64_t> group_tokens) {
  if (started_) throw SystemError("start: a step is started already; finish() it first");
  if (begun_) throw SystemError("start: a step is begun ahead (NextStep); forward it first");
  if (session_.topology().world > 1) {
    // The step thread makes this rank's MPI calls while the caller goes on.
    int level = MPI_THREAD_SINGLE;
    PLESHARD_MPI_CHECK(MPI_Query_thread(&level));
    if (level < MPI_THREAD_SERIALIZED)
      throw InputError(
          "start: runs the step's MPI calls on a thread of the engine's; initialize MPI with "
          "MPI_Init_thread and MPI_THREAD_SERIALIZED or more (forward() needs no more than "
          "MPI_THREAD_SINGLE)");
  }
  if (step_thread_ == nullptr) step_thread_ = std::make_unique<Worker>();
  const auto slot = static_cast<std::size_t>(next_step_ % static_cast<std::uint64_t>(options_.output_slots));
  started_ = Started{batch, {group_tokens.begin(), group_tokens.end()}, slot, {}};
  readiness_->begin();
  const int gpu = session_.gpu();
  step_thread_->start([this, gpu] {
    try {
      if (gpu >= 0) kernels::set_current_gpu(gpu);  // the device is a thread's own
      started_->out = forward(started_->batch, started_->group_tokens, {});
      readiness_->ready_rest(started_->out.layers);
    } catch (...) {
      readiness_->fail(std::current_exception());
      throw;
    }
  });
}

EmbeddingView StepRunner::wait_table(int table, void* stream) {
  if (!started_) throw SystemError("wait_table: no step is started (start() it first)");
  const auto [view, mark] = readiness_->wait(table);
  // The table's work, not the whole step's, before the consumer's later work; the step that
  // next writes this output slot waits for what the consumer enqueued by then (share_with).
  if (stream != nullptr && session_.space()->on_device()) {
    stream_wait_event(stream, mark->native());
    consumers_[started_->slot].push_back(stream);  // the step thread took this slot's before the table
  }
  return view;
}

StepOutput StepRunner::finish() {
  if (!started_) throw SystemError("finish: no step is started");
  try {
    step_thread_->finish();  // rethrows the step's failure
  } catch (...) {
    started_.reset();
    (void)readiness_->end();
    throw;
  }
  StepOutput out = std::move(started_->out);
  started_.reset();
  ++stats_.started_steps;
  stats_.tables_ready_early += readiness_->end();
  return out;
}

void StepRunner::run_in_halves(const TokenBatch& batch, std::int64_t slot, bool begun, const NextStep& next,
                               StepMarks& marks, StepOutput& out) {
  // The next step begins inside this one only at the slot sizes every rank agreed on; sized
  // first there, so that one too large for the engine is refused before this one begins (a
  // next step not begun here is sized by its own forward(), once).
  const bool ahead = next.batch != nullptr && beside_decode_.at(static_cast<std::size_t>(slot)) != 0;
  const std::int64_t next_slot = ahead ? slot_tokens(*next.batch, next.group_tokens) : 0;
  if (begun) {
    marks.restart();
  } else {
    begin_step(batch, slot, next_step_);
  }
  // The next step begins once this one's rows are here: its fetch runs beside this step's
  // decode (on the host space, the decode is this thread's work; on a GPU, the rows the
  // caller writes after this forward() returns).
  std::function<void()> begin_next;
  if (ahead) {
    begin_next = [&] {
      wait_until(marks_[(next_step_ + 1) % 2]->done());  // the step before this one
      begin_step(*next.batch, next_slot, next_step_ + 1);
      begun_ = Begun{*next.batch, {next.group_tokens.begin(), next.group_tokens.end()}, next_slot};
      ++stats_.steps_fetched_ahead;
    };
  }
  exchange_->finish(out.slot, marks, out.layers, begin_next);
}

void StepRunner::begin_step(const TokenBatch& batch, std::int64_t slot, std::uint64_t step) {
  StepMarks& marks = *marks_[step % 2];
  marks.begin(true);
  inject_stall(step);
  plan_->pack(batch, slot, step);
  marks.mark(StepPhase::load);
  exchange_->begin(batch.num_tokens(), marks);
}

void StepRunner::check_begun(const TokenBatch& batch, std::span<const std::int64_t> group_tokens) const {
  const Begun& b = *begun_;
  const bool same_tokens =
      group_tokens.empty() || b.group_tokens.empty() ||
      std::equal(group_tokens.begin(), group_tokens.end(), b.group_tokens.begin(), b.group_tokens.end());
  if (batch != b.batch || !same_tokens)
    throw SystemError("forward: step " + std::to_string(next_step_) +
                      " is not the batch the step before named as the next one (NextStep)");
}

void StepRunner::inject_stall(std::uint64_t step) {
  const FaultPlan& faults = fault_plan();
  if (!faults.stall_step || *faults.stall_step != step || session_.topology().rank != faults.stall_rank) return;
  session_.space()->inject_stall();
}

void StepRunner::wait() {
  if (next_step_ > 0) wait_until(marks_[(next_step_ - 1) % 2]->done());
}

void StepRunner::wait_for(void* event) {
  // The host's work has nothing to wait for.
  if (session_.space()->on_device()) stream_wait_event(session_.space()->stream(), event);
}

void StepRunner::share_with(const StepOutput& out, void* stream) {
  if (!session_.space()->on_device()) return;
  if (out.slot < 0 || out.slot >= options_.output_slots ||
      out.step + static_cast<std::uint64_t>(options_.output_slots) < next_step_)
    throw SystemError("share_with: the output of step " + std::to_string(out.step) + " has been overwritten");
  stream_wait_event(stream, out.ready);
  auto& consumers = consumers_[static_cast<std::size_t>(out.slot)];
  if (std::find(consumers.begin(), consumers.end(), stream) == consumers.end()) consumers.push_back(stream);
}

void StepRunner::wait_until(const SpaceEvent& done) {
  const double t0 = MPI_Wtime();
  const std::vector<Communicator*> comms = session_.groups().on_space();
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

void StepRunner::settle() {
  // In step order, as far as the stream has got.
  for (std::uint64_t step = next_step_ >= 2 ? next_step_ - 2 : 0; step < next_step_; ++step) {
    StepMarks& marks = *marks_[step % 2];
    if (!marks.done().done()) break;
    if (const auto seconds = marks.settle(stats_.times)) stats_.step_seconds.push_back(*seconds);
  }
  for (Communicator* c : session_.groups().on_space()) c->settle();
}

}  // namespace pleshard
