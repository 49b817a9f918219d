#pragma once
// `pleshard run` from its inputs as named on the command line: the layout, the config, the
// requests and the checkpoint are loaded and checked on every rank together (bad input is
// one message on every rank, before any collective open), then the batch job runs.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <mpi.h>

#include "ckpt/named_checkpoint.hpp"
#include "io/requests.hpp"
#include "job/batch_job.hpp"

namespace pleshard {

// What makes an engine, as `pleshard run`'s options name it: shared by `run` and the
// Python module (pleshard.Engine), so both take the same values and refuse the same ones.
struct EngineInputs {
  std::string checkpoint;  // directory, .safetensors or .h5, or "synthetic"
  std::string config;      // empty: beside the checkpoint
  std::string token_map;   // empty: found beside the config or checkpoint
  int tp = 1;
  int etp = 0;                     // 0: --tp
  std::string storage;             // every table on this tier; empty: `placement`
  std::string placement;           // "auto" (also when both are empty), a tier, or "D=TIER,..." per table
  double gpu_memory_limit_gb = 0;  // what --placement auto may use of each rank's GPU; 0: all that is free
  std::string exchange = "auto";   // auto, gather-reduce, reduce-scatter, owner or hierarchical
  std::string out_dtype = "bfloat16";
  std::string layer_prefix;  // empty: the default
};

// The inputs checked: the layout, the config, and the job's engine settings with the tier,
// the dtype and the exchange parsed in.
struct EngineSetup {
  Topology topology;
  ModelConfig config;
  BatchJobOptions job;
};

// Checks `in` and `job`'s engine settings (the step size, CUDA graphs) and reads the config;
// InputError naming the option or file. Not collective: call it inside collective_try.
[[nodiscard]] EngineSetup check_engine_inputs(MPI_Comm world, const EngineInputs& in, const BatchJobOptions& job);

// Opens the checkpoint as the tier reads it (collective over comms.world()).
[[nodiscard]] std::shared_ptr<PleCheckpoint> open_engine_checkpoint(const Communicators& comms, const EngineInputs& in,
                                                                    const EngineSetup& setup);

struct RunJobInputs : EngineInputs {
  std::string requests;                            // JSONL or .h5, unless synthetic
  std::optional<SyntheticRequestsSpec> synthetic;  // vocab_size is the config's
  std::string out;                                 // empty: summary only
  BatchJobOptions job;                             // storage, dtype and out are set from the fields above
};

// Collective over `world`.
[[nodiscard]] BatchJobReport run_job(MPI_Comm world, const RunJobInputs& inputs);

}  // namespace pleshard
