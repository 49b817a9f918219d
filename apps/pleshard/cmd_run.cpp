// pleshard run: the batch job under mpirun/srun.

#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "core/watched_wait.hpp"
#include "job/run_job.hpp"
#include "job/run_report.hpp"
#include "option_checks.hpp"

namespace pleshard::app {

namespace {

struct RunOptions {
  RunJobInputs inputs;
  SyntheticRequestsSpec synthetic;
  bool summary_only = false;
  bool quiet = false;
  bool json = false;
};

void print_report(const BatchJobReport& r, const RunOptions& o) {
  const std::vector<ReportField> fields = run_report_fields(r);
  const std::string text = o.json ? report_json(fields) : report_text("pleshard run: " + r.topology.describe(), fields);
  std::fputs(text.c_str(), stdout);
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<RunOptions>();
  RunJobInputs& in = o->inputs;
  CLI::App* cmd = app.add_subcommand(
      "run", "Batch job under mpirun/srun: every PLE layer of every request, step by step, across ranks");
  cmd->add_option("--checkpoint", in.checkpoint,
                  "Checkpoint directory, .safetensors or .h5; or synthetic: the tables of --config as ckpt make "
                  "writes them (seed 1), made where the tier keeps them")
      ->required()
      ->check(path_given());
  cmd->add_option("--config", in.config, "Model config.json (default: beside the checkpoint)")->check(path_given());
  auto* requests =
      cmd->add_option("--requests", in.requests, "Requests: JSONL ({\"id\": ..., \"tokens\": [...]} a line) or .h5")
          ->check(path_given());
  auto* synthetic =
      cmd->add_option("--synthetic", o->synthetic.count, "Use N synthetic Zipf-like requests instead of --requests")
          ->check(finite_in(1, 1e12, "a whole number of requests >= 1"));
  requests->excludes(synthetic);
  cmd->add_option("--synthetic-min-tokens", o->synthetic.min_tokens, "Shortest synthetic request")
      ->check(finite_in(1, 1e9, "a whole number of tokens from 1 to 1e9"))
      ->capture_default_str();
  cmd->add_option("--synthetic-max-tokens", o->synthetic.max_tokens, "Longest synthetic request")
      ->check(finite_in(1, 1e9, "a whole number of tokens from 1 to 1e9"))
      ->capture_default_str();
  cmd->add_option("--synthetic-seed", o->synthetic.seed, "Seed of the synthetic requests")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  auto* out =
      cmd->add_option("--out", in.out, "Output HDF5: /ple_{d}, /query_start_loc, /request_ids")->check(path_given());
  auto* summary = cmd->add_flag("--summary-only", o->summary_only, "Write no embeddings (none is copied to the host)");
  out->excludes(summary);
  cmd->add_flag("--overwrite", in.job.overwrite, "Replace an output of another job at --out (else refused)");
  cmd->add_option("--tp", in.tp, "Tensor-parallel size")->check(ranks_option())->capture_default_str();
  cmd->add_option("--etp", in.etp, "Embedding-parallel group size (default: --tp)")->check(ranks_option());
  auto* storage = cmd->add_option("--storage", in.storage,
                                  "Every table on one tier: host (CPU), device (GPU memory), pinned (host memory "
                                  "read by the GPU), disk (rows read from the checkpoint each step)")
                      ->check(CLI::IsMember(storage_tier_names()));
  cmd->add_option("--placement", in.placement,
                  "Each table's tier: auto (the default: device, then pinned, then disk, as they fit; the GPU "
                  "memory left becomes a row cache), one tier, or D=TIER,... per table (0=device,1=pinned)")
      ->excludes(storage);
  cmd->add_flag(
      "--no-shared-tables{false}", in.job.share_tables,
      "Each rank keeps its own copy of the host and pinned tiers' rows (default: one copy per node, shared by the "
      "ranks holding the same rows)");
  cmd->add_option("--gpu-memory-limit", in.gpu_memory_limit_gb,
                  "GB of each rank's GPU that --placement auto may use for tables and the cache (default: all free)")
      ->check(finite_in(0.001, 1e6, "a number of GB from 0.001 to 1e6"));
  cmd->add_option(
         "--exchange", in.exchange,
         "How rows reach the ranks that need them: owner (distinct ids to their owners, stored rows back), "
         "gather-reduce (tokens gathered, partial rows all-reduced), reduce-scatter (partial rows "
         "reduce-scattered to their ranks), hierarchical (owner in two levels: within the node, then across nodes; "
         "nodes from MPI or PLESHARD_RANKS_PER_NODE), or auto (owner where an ETP group of several ranks exchanges "
         "and no CUDA graph is asked for, else gather-reduce)")
      ->check(CLI::IsMember({"auto", "gather-reduce", "reduce-scatter", "owner", "hierarchical"}))
      ->capture_default_str();
  add_owner_gpu_plan_option(*cmd, in.job.owner_gpu_plan_from);
  add_owner_fixed_option(*cmd, in.job.owner_fixed_below);
  cmd->add_option("--step-tokens", in.job.schedule.step_tokens, "Token budget of one step")
      ->check(step_tokens_option())
      ->capture_default_str();
  cmd->add_option("--decode-tokens", in.job.schedule.decode_tokens,
                  "Last tokens of each request fed one per step, like decoding")
      ->check(finite_in(0, k_max_step_tokens, "a whole number of tokens from 0 to 16777216"))
      ->capture_default_str();
  add_out_dtype_option(*cmd, in.out_dtype);
  cmd->add_option("--part-tokens", in.job.part_tokens, "Tokens per output part (the resume unit)")
      ->check(finite_in(1, 1e18, "a whole number of tokens >= 1"))
      ->capture_default_str();
  cmd->add_option("--layer-prefix", in.layer_prefix, "safetensors tensor prefix; {L} is the 0-based decoder layer");
  cmd->add_flag("--cuda-graph", in.job.cuda_graph,
                "Replay steps from CUDA graphs, one per power-of-two step size (device and pinned tiers; NCCL)");
  cmd->add_flag("--no-fetch-ahead{false}", in.job.fetch_ahead,
                "Read a disk-tier step's rows only once the step before is decoded (default: beside its decode)");
  add_collective_timeout_option(*cmd, in.job.collective_timeout_s);
  add_token_map_option(*cmd, in.token_map);
  add_cache_options(*cmd, in.job.cache);
  add_disk_reads_option(*cmd, in.job.disk_reads);
  add_host_reads_option(*cmd, in.job.host_reads);
  cmd->add_flag("--quiet", o->quiet, "No progress lines, nor the automatic placement's (the report has it)");
  cmd->add_flag("--json", o->json, "Print the final report as one JSON line (docs/report.md)");
  cmd->callback([&action, o, synthetic, requests, out, summary] {
    if (requests->count() == 0 && synthetic->count() == 0) throw CLI::RequiredError("--requests or --synthetic");
    if (out->count() == 0 && summary->count() == 0) throw CLI::RequiredError("--out or --summary-only");
    if (synthetic->count() > 0) o->inputs.synthetic = o->synthetic;
    // Every wait for other ranks from here to MPI_Finalize is watched.
    set_stall_limit(o->inputs.job.collective_timeout_s);
    action = [o] {
      double last = -1;
      if (!o->quiet)
        o->inputs.job.progress = [&last](const JobProgress& p) {
          if (p.seconds - last < 1.0 && p.tokens_done != p.tokens) return;
          last = p.seconds;
          const double rate = p.tokens_per_s();
          std::fprintf(
              stderr, "pleshard run: %s/%s requests, %s/%s tokens (%.0f%%)  %s tokens/s  ETA %.0f s\n",
              plain_number(p.requests_done).c_str(), plain_number(p.requests).c_str(),
              plain_number(p.tokens_done).c_str(), plain_number(p.tokens).c_str(),
              p.tokens > 0 ? 100.0 * static_cast<double>(p.tokens_done) / static_cast<double>(p.tokens) : 100.0,
              plain_number(rate).c_str(), rate > 0 ? static_cast<double>(p.tokens - p.tokens_done) / rate : 0.0);
        };
      const BatchJobReport report = run_job(MPI_COMM_WORLD, o->inputs);
      if (world_rank() == 0) print_report(report, *o);
      return 0;
    };
  });
}

}  // namespace pleshard::app
