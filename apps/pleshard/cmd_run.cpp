// pleshard run: the batch job under mpirun/srun.

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>

#include "ckpt/ple_checkpoint.hpp"
#include "cli.hpp"
#include "core/collective.hpp"
#include "dist/topology.hpp"
#include "engine/batch_job.hpp"
#include "io/requests.hpp"

namespace pleshard::app {

namespace {

struct RunOptions {
  std::string config;
  std::string checkpoint;
  std::string requests;
  SyntheticRequestsSpec synthetic;
  std::string out;
  std::string out_dtype = "bfloat16";
  std::string storage = "host";
  std::string layer_prefix = k_default_layer_prefix;
  int tp = 1;
  int etp = 0;
  BatchJobOptions job;
  bool summary_only = false;
  bool quiet = false;
  bool json = false;
};

void print_report(const BatchJobReport& r, const RunOptions& o) {
  const double tokens_per_s = static_cast<double>(r.tokens) / r.seconds;
  const double rows_per_s = static_cast<double>(r.rows) / r.seconds;
  if (o.json) {
    std::printf("{\"job\": \"run\", \"storage\": \"%s\", \"backend\": \"%s\", \"ranks\": %d, \"tp\": %d"
                ", \"etp\": %d, \"requests\": %" PRId64
                ", \"tokens\": %" PRId64 ", \"steps\": %" PRId64 ", \"seconds\": %.6f, \"tokens_per_s\": %.6g"
                ", \"rows_per_s\": %.6g, \"hash_s\": %.6f, \"exchange_s\": %.6f, \"lookup_s\": %.6f"
                ", \"write_s\": %.6f, \"collect_s\": %.6f, \"graph_s\": %.6f, \"parts\": %" PRId64
                ", \"parts_resumed\": %" PRId64,
                to_string(r.storage), r.backend.c_str(), r.topology.world, r.topology.tp, r.topology.etp, r.requests, r.tokens, r.steps, r.seconds,
                tokens_per_s, rows_per_s, r.times.hash, r.times.exchange, r.times.lookup, r.times.write,
                r.times.collect, r.times.graph, r.parts, r.parts_resumed);
    for (const auto& c : r.collectives) {
      std::string key = c.name;
      std::replace(key.begin(), key.end(), ' ', '_');
      std::printf(", \"%s_bytes\": %.0f, \"%s_busbw\": %.6g", key.c_str(), c.bytes, key.c_str(), c.busbw());
    }
    std::printf("}\n");
    return;
  }
  std::printf("pleshard run: %s, storage %s, collectives over %s\n", r.topology.describe().c_str(),
              to_string(r.storage), r.backend.c_str());
  std::printf("  requests %" PRId64 ", tokens %" PRId64 ", steps %" PRId64 ", parts %" PRId64 " (%" PRId64
              " resumed)\n", r.requests, r.tokens, r.steps, r.parts, r.parts_resumed);
  std::printf("  wall %.3f s: %.4g tokens/s, %.4g rows/s\n", r.seconds, tokens_per_s, rows_per_s);
  std::printf("  phases (max over ranks): hash %.3f s, exchange %.3f s, lookup %.3f s, collect %.3f s, write %.3f s",
              r.times.hash, r.times.exchange, r.times.lookup, r.times.collect, r.times.write);
  if (r.times.graph > 0) std::printf(", CUDA graph replays %.3f s", r.times.graph);
  std::printf("\n");
  std::printf("  %-22s %6s %8s %12s %10s %10s\n", "collective (rank 0)", "ranks", "calls", "bytes", "algbw GB/s",
              "busbw GB/s");
  for (const auto& c : r.collectives)
    std::printf("  %-22s %6d %8" PRId64 " %12.4g %10.3f %10.3f\n", c.name.c_str(), c.ranks, c.calls, c.bytes,
                c.algbw() * 1e-9, c.busbw() * 1e-9);
  if (!o.summary_only) std::printf("  output %s\n", o.out.c_str());
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Batch job under mpirun/srun: every PLE layer of every request, step by step, across ranks");
  cmd->add_option("--checkpoint", o->checkpoint, "Checkpoint directory, .safetensors or .h5")->required();
  cmd->add_option("--config", o->config, "Model config.json (default: beside the checkpoint)");
  auto* requests = cmd->add_option("--requests", o->requests,
                                   "Requests: JSONL ({\"id\": ..., \"tokens\": [...]} a line) or .h5");
  auto* synthetic = cmd->add_option("--synthetic", o->synthetic.count,
                                    "Use N synthetic Zipf-like requests instead of --requests");
  requests->excludes(synthetic);
  cmd->add_option("--synthetic-min-tokens", o->synthetic.min_tokens, "Shortest synthetic request")->capture_default_str();
  cmd->add_option("--synthetic-max-tokens", o->synthetic.max_tokens, "Longest synthetic request")->capture_default_str();
  cmd->add_option("--synthetic-seed", o->synthetic.seed, "Seed of the synthetic requests")->capture_default_str();
  auto* out = cmd->add_option("--out", o->out, "Output HDF5: /ple_{d}, /query_start_loc, /request_ids");
  auto* summary = cmd->add_flag("--summary-only", o->summary_only, "Write no embeddings; report only");
  out->excludes(summary);
  cmd->add_option("--tp", o->tp, "Tensor-parallel size")->capture_default_str();
  cmd->add_option("--etp", o->etp, "Embedding-parallel group size (default: --tp)");
  cmd->add_option("--storage", o->storage,
                  "Storage tier: host (CPU), device (GPU memory), pinned (host memory read by the GPU), "
                  "disk (rows read from the checkpoint each step)")
      ->check(CLI::IsMember({"host", "device", "pinned", "disk"}))
      ->capture_default_str();
  cmd->add_option("--step-tokens", o->job.schedule.step_tokens, "Token budget of one step")->capture_default_str();
  cmd->add_option("--decode-tokens", o->job.schedule.decode_tokens,
                  "Last tokens of each request fed one per step, like decoding")->capture_default_str();
  cmd->add_option("--out-dtype", o->out_dtype, "float32, bfloat16 or float16")
      ->check(CLI::IsMember({"float32", "bfloat16", "float16"}))->capture_default_str();
  cmd->add_option("--part-tokens", o->job.part_tokens, "Tokens per output part (the resume unit)")
      ->capture_default_str();
  cmd->add_option("--layer-prefix", o->layer_prefix, "safetensors tensor prefix; {L} is the 0-based decoder layer")
      ->capture_default_str();
  cmd->add_flag("--cuda-graph", o->job.cuda_graph,
                "Capture one step in a CUDA graph and replay it (device and pinned tiers over NCCL)");
  cmd->add_flag("--quiet", o->quiet, "No progress lines");
  cmd->add_flag("--json", o->json, "Print the final report as one JSON line");
  cmd->callback([&action, o, synthetic, requests, out, summary] {
    if (requests->count() == 0 && synthetic->count() == 0) throw CLI::RequiredError("--requests or --synthetic");
    if (out->count() == 0 && summary->count() == 0) throw CLI::RequiredError("--out or --summary-only");
    action = [o, use_synthetic = synthetic->count() > 0] {
      int world = 1;
      int rank = 0;
      MPI_Comm_size(MPI_COMM_WORLD, &world);
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      struct Loaded {
        Topology topology;
        StorageTier storage = StorageTier::host;
        ModelConfig config;
        std::vector<Request> requests;
      };
      const Loaded in = collective_try(MPI_COMM_WORLD, [&] {
        Loaded l;
        l.topology = make_topology(world, rank, o->tp, o->etp);
        l.storage = parse_storage_tier(o->storage);
        if (o->job.cuda_graph && l.storage != StorageTier::device && l.storage != StorageTier::pinned)
          throw InputError("--cuda-graph needs --storage device or pinned, not " + o->storage);
        // Checked by every rank before any collective open (MPI-IO opens wait for all ranks).
        if (!std::filesystem::exists(o->checkpoint)) throw InputError(o->checkpoint + ": checkpoint not found");
        l.config = load_checkpoint_config(o->checkpoint, o->config);
        StepScheduler(std::span<const Request>(), l.config.ngram_size, l.config.eos_token_id, o->job.schedule);
        if (o->job.part_tokens < 1) throw InputError("--part-tokens must be >= 1");
        SyntheticRequestsSpec spec = o->synthetic;
        spec.vocab_size = l.config.vocab_size;
        l.requests = use_synthetic ? make_synthetic_requests(spec) : load_requests(o->requests);
        return l;
      });
      const Communicators comms(MPI_COMM_WORLD, in.topology);
      CheckpointOptions ckpt_options;
      ckpt_options.layer_prefix = o->layer_prefix;
      ckpt_options.comm = comms.world();
      // Only the host tier reads each rank's range in one collective call per table.
      ckpt_options.collective_io = in.storage == StorageTier::host;
      o->job.storage = in.storage;
      const auto checkpoint = collective_try(comms.world(), [&] {
        return std::shared_ptr<PleCheckpoint>(open_ple_checkpoint(o->checkpoint, in.config, ckpt_options));
      });
      o->job.dtype = parse_out_dtype(o->out_dtype);
      o->job.out = o->summary_only ? std::filesystem::path() : std::filesystem::path(o->out);
      double last = -1;
      if (!o->quiet)
        o->job.progress = [&last](const JobProgress& p) {
          if (p.seconds - last < 1.0 && p.tokens_done != p.tokens) return;
          last = p.seconds;
          const double rate = static_cast<double>(p.tokens_done) / std::max(p.seconds, 1e-9);
          std::fprintf(stderr,
                       "pleshard run: %" PRId64 "/%" PRId64 " requests, %" PRId64 "/%" PRId64
                       " tokens (%.0f%%)  %.4g tokens/s  ETA %.0f s\n",
                       p.requests_done, p.requests, p.tokens_done, p.tokens,
                       p.tokens > 0 ? 100.0 * static_cast<double>(p.tokens_done) / static_cast<double>(p.tokens) : 100.0,
                       rate, rate > 0 ? static_cast<double>(p.tokens - p.tokens_done) / rate : 0.0);
        };
      // A failure inside the job is one rank's; main() then takes every rank down.
      const BatchJobReport report = run_batch_job(comms, in.config, *checkpoint, in.requests, o->job);
      if (rank == 0) print_report(report, *o);
      return 0;
    };
  });
}

}  // namespace pleshard::app
