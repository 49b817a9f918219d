#pragma once
// pleshard.Engine: a PleEngine made from `pleshard run`'s options (checked and opened by
// check_engine_inputs and open_engine_checkpoint, as `run` does), stepping the batches that
// Python gives it and counting what it did for its report.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "job/engine_option_table.hpp"
#include "job/run_job.hpp"

namespace pleshard::python {

struct EngineArguments {
  EngineInputs inputs;
  BatchJobOptions job;  // the step size, CUDA graphs and the collective timeout
  int output_slots = k_default_output_slots;
  MPI_Comm comm = MPI_COMM_WORLD;
};

// Python threads may call one engine at once (forward releases the GIL): every call takes
// the engine's lock, so steps, reports and close() take turns and close() waits for a step
// in flight.
class PythonEngine {
 public:
  // Collective over `comm` (MPI and Kokkos running: ensure_runtime()); bad input is an
  // AgreedError (input()) on every rank.
  explicit PythonEngine(const EngineArguments& args);
  ~PythonEngine();
  PythonEngine(const PythonEngine&) = delete;
  PythonEngine& operator=(const PythonEngine&) = delete;

  // My DP rank's step of the batch `make_batch` builds and checks; where there are several
  // ranks they agree on a failure first, so a bad batch on one rank is an error on all.
  StepOutput forward(const std::function<TokenBatch()>& make_batch);
  // forward() in halves (PleEngine::start): the step started on the engine's thread with
  // the batch checked as forward() checks it; each table's output once that table is
  // enqueued (its other tables' views empty); the whole output as forward() returns it.
  void start(const std::function<TokenBatch()>& make_batch);
  StepOutput wait_table(int table);
  StepOutput finish();
  // Steps forwarded or finished so far (a started step counts once finished).
  [[nodiscard]] std::int64_t steps() const;
  // Whether `out`'s slot still holds its step's rows (no later forward() wrote it again).
  [[nodiscard]] bool holds(const StepOutput& out) const;
  // "the output of step S ...": why `out` is not held any more.
  [[nodiscard]] std::string overwritten(const StepOutput& out) const;
  // `stream` waits on the GPU for table `table` of `out`: for a started step, for that
  // table's work alone; otherwise for the step (SystemError while another step is started).
  void share(const StepOutput& out, int table, void* stream);
  // The memory the outputs live in (kept by the arrays beyond close()) and the engine's GPU
  // (-1 on the host); SystemError once closed.
  [[nodiscard]] std::pair<std::shared_ptr<const void>, int> output_memory() const;
  void wait();
  // The run report as one JSON object (docs/report.md); collective over the engine's ranks.
  [[nodiscard]] std::string report_json();
  // Frees the engine (its tables, buffers and communicators); later calls are errors.
  void close();

  [[nodiscard]] bool closed() const { return engine_ == nullptr; }
  [[nodiscard]] PleEngine& engine() const;
  [[nodiscard]] const ModelConfig& config() const { return config_; }
  [[nodiscard]] const EngineArguments& arguments() const { return args_; }
  [[nodiscard]] int world_size() const { return world_size_; }

 private:
  void close_locked();
  // The batch `make_batch` builds, checked; agreed over the ranks where there are several.
  TokenBatch checked_batch(const std::function<TokenBatch()>& make_batch, const char* what);
  // The output of the started step as far as `table`: its view only.
  [[nodiscard]] StepOutput started_output(int table, const EmbeddingView& view) const;

  mutable std::mutex mutex_;
  EngineArguments args_;
  MPI_Comm comm_ = MPI_COMM_NULL;  // a duplicate of the caller's
  int world_size_ = 1;
  ModelConfig config_;
  std::unique_ptr<Communicators> comms_;
  std::shared_ptr<PleCheckpoint> checkpoint_;
  std::unique_ptr<PleEngine> engine_;
  std::int64_t requests_ = 0;
  std::int64_t tokens_ = 0;
  double first_step_ = 0;  // MPI_Wtime() at the first forward()
  // Steps forwarded or started so far (a started step writes its output slot from start());
  // the started step's number while one is.
  std::uint64_t steps_begun_ = 0;
  std::optional<std::uint64_t> started_;
  std::int64_t failed_starts_ = 0;  // started steps that failed on the engine's thread
};

// A step's batch from flat tokens, request boundaries and one context per request (null:
// a fresh request), checked as BATCH.json's are; InputError naming the argument and `what`
// (the call: "forward", "start").
[[nodiscard]] TokenBatch make_step_batch(const ModelConfig& config, std::span<const std::int64_t> tokens,
                                         std::span<const std::int64_t> query_start_loc,
                                         const std::vector<std::optional<std::vector<std::int64_t>>>& contexts,
                                         const char* what);

}  // namespace pleshard::python
