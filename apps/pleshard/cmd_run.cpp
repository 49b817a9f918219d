// pleshard run: the batch job under mpirun/srun.

#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "core/watched_wait.hpp"
#include "engine_option_cli.hpp"
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
  // The engine's options, from the library's table; then the batch job's own.
  add_engine_options(*cmd, EngineCommand::run, EngineTarget{&in, &in.job});
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
  cmd->add_flag(
      "--no-shared-tables{false}", in.job.share_tables,
      "Each rank keeps its own copy of the host and pinned tiers' rows (default: one copy per node, shared by the "
      "ranks holding the same rows)");
  cmd->add_option("--decode-tokens", in.job.schedule.decode_tokens,
                  "Last tokens of each request fed one per step, like decoding")
      ->check(finite_in(0, k_max_step_tokens, "a whole number of tokens from 0 to 16777216"))
      ->capture_default_str();
  cmd->add_option("--part-tokens", in.job.part_tokens, "Tokens per output part (the resume unit)")
      ->check(finite_in(1, 1e18, "a whole number of tokens >= 1"))
      ->capture_default_str();
  cmd->add_flag("--no-fetch-ahead{false}", in.job.fetch_ahead,
                "Fetch a step's rows (disk tier; pinned tier's host gathers; groups of several ranks under "
                "gather-reduce, reduce-scatter or peer-read) only once the step before is decoded (default: beside "
                "its decode)");
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
