#include "job/run_job.hpp"

#include <filesystem>
#include <memory>

#include "ckpt/named_checkpoint.hpp"
#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "core/option_names.hpp"
#include "core/sha256.hpp"
#include "core/watched_wait.hpp"

namespace pleshard {

EngineSetup check_engine_inputs(MPI_Comm world, const EngineInputs& in, const BatchJobOptions& job) {
  int ranks = 1;
  int rank = 0;
  MPI_Comm_size(world, &ranks);
  MPI_Comm_rank(world, &rank);
  EngineSetup s;
  s.topology = make_topology(ranks, rank, in.tp, in.etp);
  s.job = job;
  s.job.dtype = parse_out_dtype(in.out_dtype);
  s.job.exchange = parse_exchange_strategy(in.exchange);
  const bool synthetic = in.checkpoint == k_synthetic_checkpoint;
  s.config = load_named_checkpoint_config(in.checkpoint, in.config, in.token_map);
  // Where the tables live: --storage T (every table on T), --placement per table, or the
  // automatic placement (the default), which the engine plans once it knows what each rank has.
  const std::string storage = option_name(Option::storage);
  if (!in.storage.empty() && !in.placement.empty())
    throw InputError(option_is(Option::storage, in.storage) + " and " + option_is(Option::placement, in.placement) +
                     ": give one (" + option_with(Option::storage, "T") + " is " + option_with(Option::placement, "T") +
                     ")");
  if (job.cache.rows > 0 && job.cache.gb > 0)
    throw InputError(option_name(Option::cache_rows) + " and " + option_name(Option::cache_gb) + ": give one of them");
  const std::string& asked = in.storage.empty() ? in.placement : in.storage;
  s.job.auto_placement = asked.empty() || asked == "auto";
  if (!s.job.auto_placement && in.gpu_memory_limit_gb > 0)
    throw InputError(option_name(Option::gpu_memory_limit) + ": the budget of " + option_is(Option::placement, "auto") +
                     ", not of " + storage + " or " + option_is(Option::placement, asked));
  s.job.gpu_memory_limit = static_cast<std::uint64_t>(in.gpu_memory_limit_gb * 1e9);
  if (s.job.auto_placement) {
    // Without a GPU the plan can only be host and disk.
    if (s.job.cuda_graph && !gpu_available())
      throw InputError(option_name(Option::cuda_graph) + " needs " + storage +
                       " device or pinned, not host (no GPU here for " + option_is(Option::placement, "auto") + ")");
    (void)choose_exchange(s.job.exchange, {s.topology, s.job.cuda_graph}, false);
  } else {
    const int tables = s.config.num_ple_layers();
    const Placement placement = !in.storage.empty() ? Placement::every(parse_storage_tier(in.storage), tables)
                                                    : parse_placement(in.placement, tables);
    s.job.placement = placement.tiers;
    const TierCapabilities can = placement.capabilities();
    if (s.job.cuda_graph && !can.graph_capturable)
      throw InputError(option_name(Option::cuda_graph) + " needs " + storage + " device or pinned, not " + asked);
    (void)choose_exchange(s.job.exchange, {s.topology, s.job.cuda_graph}, can.whole_tables);
    if (synthetic && can.reads_files)
      throw InputError(option_is(Option::checkpoint, k_synthetic_checkpoint) + ": the " + asked +
                       " tier reads checkpoint files");
  }
  (void)StepScheduler(std::span<const Request>(), s.config.ngram_size, s.job.schedule);
  return s;
}

std::shared_ptr<PleCheckpoint> open_engine_checkpoint(const Communicators& comms, const EngineInputs& in,
                                                      const EngineSetup& setup) {
  CheckpointOptions options;
  if (!in.layer_prefix.empty()) options.layer_prefix = in.layer_prefix;
  // Only the host tier reads each rank's range in one collective call per table; the other
  // tiers open the files on their own, so no close or read of theirs waits for other ranks.
  // (An automatic placement is not known yet: its checkpoint reads independently.)
  options.collective_io = !setup.job.auto_placement && Placement{setup.job.placement}.capabilities().loads_collectively;
  options.comm = options.collective_io ? comms.world() : MPI_COMM_SELF;
  return collective_try(comms.world(), [&] {
    return std::shared_ptr<PleCheckpoint>(open_named_checkpoint(in.checkpoint, setup.config, options));
  });
}

BatchJobReport run_job(MPI_Comm world, const RunJobInputs& in) {
  reach_fault_point(FaultPoint::start);
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  WaitContext phase("reading the job's inputs");
  struct Loaded {
    EngineSetup setup;
    std::vector<Request> requests;
  };
  const Loaded loaded = collective_try(world, [&] {
    Loaded l;
    l.setup = check_engine_inputs(world, in, in.job);
    BatchJobOptions& job = l.setup.job;
    job.out = in.out;
    if (job.part_tokens < 1) throw InputError(option_name(Option::part_tokens) + " must be >= 1");
    if (in.synthetic) {
      SyntheticRequestsSpec spec = *in.synthetic;
      spec.vocab_size = l.setup.config.vocab_size;
      l.requests = make_synthetic_requests(spec);
      job.requests_source = "synthetic: " + std::to_string(spec.count) + " requests of " +
                            std::to_string(spec.min_tokens) + " to " + std::to_string(spec.max_tokens) +
                            " tokens, seed " + std::to_string(spec.seed);
    } else {
      l.requests = load_requests(in.requests);
      job.requests_source = in.requests;
      // Only rank 0 writes the output's attributes.
      if (rank == 0 && !in.out.empty()) job.requests_sha256 = sha256_of_file(in.requests);
    }
    check_token_ranges(l.requests, l.setup.config.vocab_size);
    // What the job reads, so that --out can name none of it.
    job.inputs = model_files(l.setup.config);
    for (const std::string& file : {in.requests, job.cache.profile.string()})
      if (!file.empty()) job.inputs.emplace_back(file);
    if (std::filesystem::is_directory(in.checkpoint)) job.inputs.push_back(in.checkpoint);
    return l;
  });
  phase.enter("opening the checkpoint");
  const Communicators comms(world, loaded.setup.topology);
  const auto checkpoint = open_engine_checkpoint(comms, in, loaded.setup);
  phase.enter("the job");
  // A failure inside the job is one rank's; the app then takes every rank down.
  return run_batch_job(comms, loaded.setup.config, *checkpoint, loaded.requests, loaded.setup.job);
}

}  // namespace pleshard
