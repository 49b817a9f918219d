#include "engine.hpp"

#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/mpi_check.hpp"
#include "io/batch_json.hpp"
#include "job/run_report.hpp"
#include "runtime.hpp"

namespace pleshard::python {

PythonEngine::PythonEngine(const EngineArguments& args) : args_(args) {
  // The caller's communicator carries none of the engine's messages, its checks' included.
  PLESHARD_MPI_CHECK(MPI_Comm_dup(args.comm, &comm_));
  try {
    PLESHARD_MPI_CHECK(MPI_Comm_size(comm_, &world_size_));
    const EngineSetup setup = collective_try(comm_, [&] { return check_engine_inputs(comm_, args.inputs, args.job); });
    config_ = setup.config;
    comms_ = std::make_unique<Communicators>(comm_, setup.topology);
    checkpoint_ = open_engine_checkpoint(*comms_, args.inputs, setup);
    EngineOptions options = engine_options(setup.job);
    options.output_slots = args.output_slots;
    args_.job = setup.job;
    // The engine refuses on every rank alike (its checks and memory fits are agreed inside).
    engine_ = std::make_unique<PleEngine>(*comms_, config_, *checkpoint_, options);
  } catch (...) {
    close();
    throw;
  }
  track_open(this, [this] { close(); });
}

PythonEngine::~PythonEngine() {
  untrack(this);
  close();
}

void PythonEngine::close() {
  engine_.reset();
  checkpoint_.reset();
  comms_.reset();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

PleEngine& PythonEngine::engine() const {
  if (engine_ == nullptr) throw SystemError("this engine is closed");
  return *engine_;
}

StepOutput PythonEngine::forward(const std::function<TokenBatch()>& make_batch) {
  PleEngine& engine = this->engine();
  const TokenBatch batch = world_size_ > 1 ? collective_try(comms_->world(), make_batch) : make_batch();
  if (engine.stats().steps == 0) first_step_ = MPI_Wtime();
  StepOutput out = engine.forward(batch);
  requests_ += batch.num_requests();
  tokens_ += batch.num_tokens();
  return out;
}

bool PythonEngine::holds(const StepOutput& out) const {
  if (engine_ == nullptr) return false;
  const auto steps = static_cast<std::uint64_t>(engine_->stats().steps);
  return out.step + static_cast<std::uint64_t>(engine_->output_slots()) >= steps;
}

std::string PythonEngine::overwritten(const StepOutput& out) const {
  if (engine_ == nullptr) return "the output of step " + std::to_string(out.step) + " is gone: its engine is closed";
  const int slots = engine_->output_slots();
  return "the output of step " + std::to_string(out.step) + " was overwritten by step " +
         std::to_string(out.step + static_cast<std::uint64_t>(slots)) + " (output_slots=" + std::to_string(slots) +
         " keeps the last " + std::to_string(slots) + " steps' outputs): copy it sooner or raise output_slots";
}

void PythonEngine::share(const StepOutput& out, void* stream) { engine().share_with(out, stream); }

void PythonEngine::wait() { engine().wait(); }

std::string PythonEngine::report_json() {
  PleEngine& engine = this->engine();
  engine.wait();
  BatchJobReport report;
  report.job = "python";
  report.cuda_graph = args_.job.cuda_graph;
  report.steps = engine.stats().steps;
  report.seconds = report.steps > 0 ? MPI_Wtime() - first_step_ : 0;
  // The TP ranks of a DP rank step the same batch: counted once.
  const bool counts = engine.topology().tp_rank() == 0;
  std::int64_t done[2] = {counts ? requests_ : 0, counts ? tokens_ : 0};
  PLESHARD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, done, 2, MPI_INT64_T, MPI_SUM, comms_->world()));
  report.requests = done[0];
  report.tokens = done[1];
  report.rows_per_token = static_cast<std::int64_t>(config_.total_heads()) * config_.num_ple_layers();
  add_engine_report(report, engine);
  reduce_report(report, engine, comms_->world());
  return pleshard::report_json(run_report_fields(report));
}

TokenBatch make_step_batch(const ModelConfig& config, std::span<const std::int64_t> tokens,
                           std::span<const std::int64_t> query_start_loc,
                           const std::vector<std::optional<std::vector<std::int64_t>>>& contexts) {
  // The boundaries checked as a batch's are before any request is cut along them.
  TokenBatch bounds(config.ngram_size);
  bounds.tokens.assign(tokens.begin(), tokens.end());
  bounds.query_start_loc.assign(query_start_loc.begin(), query_start_loc.end());
  if (bounds.query_start_loc.empty())
    throw InputError("forward: query_start_loc is empty; expected requests + 1 entries");
  bounds.context.assign(static_cast<std::size_t>(bounds.num_requests() * bounds.context_width), 0);
  validate_batch(bounds, "forward");
  const std::int64_t requests = bounds.num_requests();
  if (!contexts.empty() && static_cast<std::int64_t>(contexts.size()) != requests)
    throw InputError("forward: " + std::to_string(contexts.size()) + " contexts for " + std::to_string(requests) +
                     " requests");
  TokenBatch batch(config.ngram_size);
  for (std::int64_t r = 0; r < requests; ++r) {
    const auto begin = static_cast<std::size_t>(query_start_loc[static_cast<std::size_t>(r)]);
    const auto end = static_cast<std::size_t>(query_start_loc[static_cast<std::size_t>(r) + 1]);
    std::optional<std::span<const std::int64_t>> context;
    if (!contexts.empty() && contexts[static_cast<std::size_t>(r)]) context = *contexts[static_cast<std::size_t>(r)];
    add_batch_request(batch, config, tokens.subspan(begin, end - begin), context,
                      "forward: request " + std::to_string(r));
  }
  return batch;
}

}  // namespace pleshard::python
