#include "engine.hpp"

#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/collective.hpp"
#include "core/digest.hpp"
#include "core/error.hpp"
#include "core/mpi_check.hpp"
#include "core/watched_collectives.hpp"
#include "hash/batch_json.hpp"
#include "job/run_report.hpp"
#include "runtime.hpp"

namespace pleshard::python {

namespace {

// A double as every rank spells it exactly.
std::string exact(double value) {
  std::ostringstream text;
  text << std::setprecision(17) << value;
  return text.str();
}

// Collective over `comm`: an AgreedError on every rank naming the first of `named` whose
// value differs between the ranks (compared as 64-bit digests).
void require_same(MPI_Comm comm, const std::vector<std::pair<const char*, std::string>>& named,
                  const std::string& remedy) {
  std::vector<std::uint64_t> lowest;
  for (const auto& [name, value] : named) lowest.push_back(Digest().add(std::string_view(value)).value());
  std::vector<std::uint64_t> highest = lowest;
  const int n = static_cast<int>(named.size());
  watched_allreduce(lowest.data(), n, MPI_UINT64_T, MPI_MIN, comm, "the ranks' Engine arguments");
  watched_allreduce(highest.data(), n, MPI_UINT64_T, MPI_MAX, comm, "the ranks' Engine arguments");
  std::exception_ptr failure;
  for (std::size_t i = 0; i < named.size() && !failure; ++i)
    if (lowest[i] != highest[i])
      failure = std::make_exception_ptr(
          InputError(std::string(named[i].first) + ": the ranks passed different values; " + remedy));
  rethrow_agreed(comm, failure);
}

// The arguments every rank must pass alike: the layout and the engine's settings (`run` gets
// them alike from one command line; Python ranks each pass their own). Paths may differ: a
// node may keep its copy of a checkpoint elsewhere (what they hold is compared once read, by
// the engine: EngineSession).
// An AgreedError on every rank naming the first that differs, before anything is opened.
void require_same_arguments(MPI_Comm comm, const EngineArguments& args) {
  const EngineInputs& in = args.inputs;
  const BatchJobOptions& job = args.job;
  require_same(comm,
               {
                   {"tp", std::to_string(in.tp)},
                   {"etp", std::to_string(in.etp)},
                   {"storage", in.storage},
                   {"placement", in.placement},
                   {"gpu_memory_limit", exact(in.gpu_memory_limit_gb)},
                   {"exchange", in.exchange},
                   {"out_dtype", in.out_dtype},
                   {"cuda_graph", std::to_string(static_cast<int>(job.cuda_graph))},
                   {"output_slots", std::to_string(args.output_slots)},
                   {"step_tokens", std::to_string(job.schedule.step_tokens)},
                   {"collective_timeout", exact(job.collective_timeout_s)},
                   {"cache_rows", std::to_string(job.cache.rows)},
                   {"cache_gb", exact(job.cache.gb)},
                   {"cache_static", exact(job.cache.static_share)},
                   {"cache_profile (given or not)", std::to_string(static_cast<int>(!job.cache.profile.empty()))},
                   {"disk_reads", std::to_string(static_cast<int>(job.disk_reads))},
                   {"host_reads", to_string(job.host_reads)},
                   {"owner_gpu_plan_from", std::to_string(job.owner_gpu_plan_from)},
                   {"owner_fixed_below", std::to_string(job.owner_fixed_below)},
                   {"layer_prefix", in.layer_prefix},
                   {"checkpoint (synthetic or a path)",
                    std::to_string(static_cast<int>(in.checkpoint == k_synthetic_checkpoint))},
               },
               "every rank of an engine passes the same");
}

std::uint64_t digest_of(const TokenBatch& batch) {
  return Digest()
      .add(std::span<const std::int64_t>(batch.tokens))
      .add(std::span<const std::int64_t>(batch.query_start_loc))
      .add(std::span<const std::int64_t>(batch.context))
      .value();
}

}  // namespace

PythonEngine::PythonEngine(const EngineArguments& args) : args_(args) {
  // The caller's communicator carries none of the engine's messages, its checks' included.
  comm_ = watched_dup(args.comm, "making an Engine");
  try {
    PLESHARD_MPI_CHECK(MPI_Comm_size(comm_, &world_size_));
    require_same_arguments(comm_, args);
    const EngineSetup setup = collective_try(comm_, [&] { return check_engine_inputs(comm_, args.inputs, args.job); });
    config_ = setup.config;
    comms_ = std::make_unique<Communicators>(comm_, setup.topology);
    checkpoint_ = open_engine_checkpoint(*comms_, args.inputs, setup);
    EngineOptions options = engine_options(setup.job);
    options.output_slots = args.output_slots;
    options.fetch_ahead = false;  // the module names no next step (NextStep)
    args_.job = setup.job;
    // The engine refuses on every rank alike (its checks and memory fits are agreed inside).
    engine_ = std::make_unique<PleEngine>(*comms_, config_, *checkpoint_, options);
  } catch (...) {
    close_locked();
    throw;
  }
  track_open(this, [this] { close(); });
}

PythonEngine::~PythonEngine() {
  untrack(this);
  close();
}

void PythonEngine::close() {
  const std::lock_guard lock(mutex_);
  close_locked();
}

void PythonEngine::close_locked() {
  engine_.reset();
  checkpoint_.reset();
  comms_.reset();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

PleEngine& PythonEngine::engine() const {
  if (engine_ == nullptr) throw SystemError("this engine is closed");
  return *engine_;
}

TokenBatch PythonEngine::checked_batch(const std::function<TokenBatch()>& make_batch, const char* what) {
  PleEngine& engine = this->engine();
  const std::int64_t most = args_.job.schedule.step_tokens;
  std::exception_ptr failure;
  TokenBatch batch;
  try {
    batch = make_batch();
    if (batch.num_tokens() > most)
      throw InputError(std::string(what) + ": " + std::to_string(batch.num_tokens()) + " tokens exceed step_tokens=" +
                       std::to_string(most) + ", the engine's largest step; split the batch or raise step_tokens");
  } catch (const std::exception&) {
    failure = std::current_exception();
  }
  if (world_size_ > 1) {
    // The TP ranks of a DP rank step one batch: a batch that differs between them would
    // give each rank's share of other tokens' embeddings. Checked in one small all-reduce
    // over the TP group (every rank joins it, a failing one too), then every rank agrees.
    if (engine.topology().tp > 1) {
      const std::uint64_t digest = failure ? 0 : digest_of(batch);
      std::uint64_t seen[3] = {digest, failure ? 0 : ~digest, failure ? 0U : 1U};
      watched_allreduce(seen, 3, MPI_UINT64_T, MPI_MIN, comms_->tp(), std::string(what) + ": the TP ranks' batches");
      const bool all_made = seen[2] == 1;
      if (!failure && all_made && seen[0] != ~seen[1])
        failure = std::make_exception_ptr(
            InputError(std::string(what) + ": the TP ranks of DP rank " + std::to_string(engine.topology().dp_rank()) +
                       " were given different batches; every TP rank of a DP rank passes the same tokens, "
                       "query_start_loc and contexts"));
    }
    rethrow_agreed(comms_->world(), failure);
  } else if (failure) {
    std::rethrow_exception(failure);
  }
  if (steps_begun_ == 0) first_step_ = MPI_Wtime();
  requests_ += batch.num_requests();
  tokens_ += batch.num_tokens();
  return batch;
}

StepOutput PythonEngine::forward(const std::function<TokenBatch()>& make_batch) {
  const std::lock_guard lock(mutex_);
  if (started_) throw SystemError("forward: a step is started; finish() it first");
  const TokenBatch batch = checked_batch(make_batch, "forward");
  StepOutput out = engine().forward(batch);
  ++steps_begun_;
  return out;
}

void PythonEngine::start(const std::function<TokenBatch()>& make_batch) {
  const std::lock_guard lock(mutex_);
  if (started_) throw SystemError("start: a step is started already; finish() it first");
  const TokenBatch batch = checked_batch(make_batch, "start");
  engine().start(batch);
  started_ = steps_begun_++;
}

StepOutput PythonEngine::started_output(int table, const EmbeddingView& view) const {
  const PleEngine& engine = this->engine();
  StepOutput out;
  out.layers.resize(static_cast<std::size_t>(engine.num_layers()));
  out.layers.at(static_cast<std::size_t>(table)) = view;
  out.on_device = engine.space().on_device();
  out.stream = engine.space().stream();
  out.step = *started_;
  out.slot = static_cast<int>(*started_ % static_cast<std::uint64_t>(engine.output_slots()));
  return out;
}

StepOutput PythonEngine::wait_table(int table) {
  const std::lock_guard lock(mutex_);
  if (!started_) throw SystemError("wait_table: no step is started (start() it first)");
  return started_output(table, engine().wait_table(table));
}

std::int64_t PythonEngine::steps() const {
  const std::lock_guard lock(mutex_);
  return static_cast<std::int64_t>(steps_begun_) - (started_ ? 1 : 0) - failed_starts_;
}

StepOutput PythonEngine::finish() {
  const std::lock_guard lock(mutex_);
  if (!started_) throw SystemError("finish: no step is started");
  started_.reset();
  try {
    return engine().finish();
  } catch (...) {
    ++failed_starts_;  // written to its slot perhaps (holds() counts it), but not a step done
    throw;
  }
}

bool PythonEngine::holds(const StepOutput& out) const {
  const std::lock_guard lock(mutex_);
  if (engine_ == nullptr) return false;
  return out.step + static_cast<std::uint64_t>(engine_->output_slots()) >= steps_begun_;
}

std::string PythonEngine::overwritten(const StepOutput& out) const {
  const std::lock_guard lock(mutex_);
  if (engine_ == nullptr) return "the output of step " + std::to_string(out.step) + " is gone: its engine is closed";
  const int slots = engine_->output_slots();
  return "the output of step " + std::to_string(out.step) + " was overwritten by step " +
         std::to_string(out.step + static_cast<std::uint64_t>(slots)) + " (output_slots=" + std::to_string(slots) +
         " keeps the last " + std::to_string(slots) + " steps' outputs): copy it sooner or raise output_slots";
}

void PythonEngine::share(const StepOutput& out, int table, void* stream) {
  const std::lock_guard lock(mutex_);
  if (started_ && out.step == *started_) {
    (void)engine().wait_table(table, stream);  // that table's work alone
    return;
  }
  engine().share_with(out, stream);
}

std::pair<std::shared_ptr<const void>, int> PythonEngine::output_memory() const {
  const std::lock_guard lock(mutex_);
  return {engine().output_memory(), engine().gpu()};
}

void PythonEngine::wait() {
  const std::lock_guard lock(mutex_);
  engine().wait();
}

std::string PythonEngine::report_json() {
  const std::lock_guard lock(mutex_);
  PleEngine& engine = this->engine();
  engine.wait();
  BatchJobReport report;
  report.job = "python";
  report.model_family = to_string(config_.family);
  report.token_map = describe_token_map(config_);
  if (engine.placement().uses(StorageTier::pinned)) report.host_reads = to_string(args_.job.host_reads);
  report.cuda_graph = args_.job.cuda_graph;
  report.steps = engine.stats().steps;
  report.seconds = report.steps > 0 ? MPI_Wtime() - first_step_ : 0;
  // The TP ranks of a DP rank step the same batch: counted once.
  const bool counts = engine.topology().tp_rank() == 0;
  std::int64_t done[2] = {counts ? requests_ : 0, counts ? tokens_ : 0};
  watched_allreduce(done, 2, MPI_INT64_T, MPI_SUM, comms_->world(), "report: the ranks' tokens");
  report.requests = done[0];
  report.tokens = done[1];
  report.rows_per_token = static_cast<std::int64_t>(config_.total_heads()) * config_.num_ple_layers();
  add_engine_report(report, engine);
  reduce_report(report, engine, comms_->world());
  return pleshard::report_json(run_report_fields(report));
}

TokenBatch make_step_batch(const ModelConfig& config, std::span<const std::int64_t> tokens,
                           std::span<const std::int64_t> query_start_loc,
                           const std::vector<std::optional<std::vector<std::int64_t>>>& contexts, const char* what) {
  const std::string call = what;
  // The boundaries checked as a batch's are before any request is cut along them.
  TokenBatch bounds(config.ngram_size);
  bounds.tokens.assign(tokens.begin(), tokens.end());
  bounds.query_start_loc.assign(query_start_loc.begin(), query_start_loc.end());
  if (bounds.query_start_loc.empty())
    throw InputError(call + ": query_start_loc is empty; expected requests + 1 entries");
  bounds.context.assign(static_cast<std::size_t>(bounds.num_requests() * bounds.context_width), 0);
  validate_batch(bounds, what);
  const std::int64_t requests = bounds.num_requests();
  if (!contexts.empty() && static_cast<std::int64_t>(contexts.size()) != requests)
    throw InputError(call + ": " + std::to_string(contexts.size()) + " contexts for " + std::to_string(requests) +
                     " requests");
  TokenBatch batch(config.ngram_size);
  for (std::int64_t r = 0; r < requests; ++r) {
    const auto begin = static_cast<std::size_t>(query_start_loc[static_cast<std::size_t>(r)]);
    const auto end = static_cast<std::size_t>(query_start_loc[static_cast<std::size_t>(r) + 1]);
    std::optional<std::span<const std::int64_t>> context;
    if (!contexts.empty() && contexts[static_cast<std::size_t>(r)]) context = *contexts[static_cast<std::size_t>(r)];
    add_batch_request(batch, config, tokens.subspan(begin, end - begin), context,
                      call + ": request " + std::to_string(r));
  }
  return batch;
}

}  // namespace pleshard::python
