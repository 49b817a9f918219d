// pleshard run: the batch job under mpirun/srun.

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "engine/run_job.hpp"
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
  const double tokens_per_s = static_cast<double>(r.tokens) / r.seconds;
  const double rows_per_s = static_cast<double>(r.rows) / r.seconds;
  const double write_rate = r.write_seconds > 0 ? r.bytes_written / r.write_seconds : 0;
  const double load_rate = r.load_seconds > 0 ? r.load_bytes / r.load_seconds : 0;
  if (o.json) {
    std::printf(
        "{\"job\": \"run\", \"storage\": \"%s\", \"backend\": \"%s\", \"backend_note\": \"%s\""
        ", \"exchange\": \"%s\", \"ranks\": %d"
        ", \"tp\": %d, \"etp\": %d, \"cuda_graph\": %s, \"requests\": %" PRId64 ", \"tokens\": %" PRId64
        ", \"steps\": %" PRId64
        ", \"seconds\": %.6f, \"tokens_per_s\": %.6g, \"rows_per_s\": %.6g"
        ", \"step_p50_us\": %.3f, \"step_p99_us\": %.3f, \"steps_s\": %.6f, \"graph_s\": %.6f",
        to_string(r.storage), r.backend.c_str(), r.backend_note.c_str(), r.exchange.c_str(), r.topology.world,
        r.topology.tp, r.topology.etp, r.cuda_graph ? "true" : "false", r.requests, r.tokens, r.steps, r.seconds,
        tokens_per_s, rows_per_s, r.step_p50 * 1e6, r.step_p99 * 1e6, r.times.steps, r.times.graph);
    for (int p = 0; p < k_step_phases; ++p)
      std::printf(", \"%s_s\": %.6f", to_string(static_cast<StepPhase>(p)), r.times.phase[static_cast<std::size_t>(p)]);
    std::printf(
        ", \"host_copy_bytes\": %.0f, \"bytes_written\": %.0f, \"write_s\": %.6f, \"write_bytes_per_s\": %.6g"
        ", \"parts\": %" PRId64 ", \"parts_resumed\": %" PRId64
        ", \"table_load_s\": %.6f, \"table_load_bytes\": %.0f, \"table_load_bytes_per_s\": %.6g"
        ", \"table_load_peak_resident_bytes\": %.0f, \"cache_fill_s\": %.6f",
        r.host_copy_bytes, r.bytes_written, r.write_seconds, write_rate, r.parts, r.parts_resumed, r.load_seconds,
        r.load_bytes, load_rate, r.load_peak_resident, r.cache_fill_seconds);
    std::printf(", \"exchange_bytes_sent\": %.0f, \"exchange_bytes_per_rank_token\": %.6g, \"exchange_ids\": %" PRId64
                ", \"exchange_ids_sent\": %" PRId64 ", \"exchange_rows_sent\": %" PRId64
                ", \"exchange_share\": %.4f"
                ", \"exchange_bytes_between_nodes\": %.0f",
                r.traffic.bytes_sent, r.bytes_per_token(), r.traffic.ids, r.traffic.ids_sent, r.traffic.rows_sent,
                r.exchange_share(), r.traffic.bytes_between_nodes);
    for (std::size_t d = 0; d < r.cache.size(); ++d)
      std::printf(", \"cache_%zu_static_rows\": %" PRId64 ", \"cache_%zu_dynamic_rows\": %" PRId64
                  ", \"cache_%zu_hits\": %" PRId64 ", \"cache_%zu_misses\": %" PRId64
                  ", \"cache_%zu_repeats\": %" PRId64,
                  d, r.cache[d].static_rows, d, r.cache[d].dynamic_rows, d, r.cache[d].hits, d, r.cache[d].misses, d,
                  r.cache[d].repeats);
    for (const auto& c : r.collectives) {
      std::string key = c.name;
      std::replace(key.begin(), key.end(), ' ', '_');
      std::printf(", \"%s_bytes\": %.0f, \"%s_busbw\": %.6g", key.c_str(), c.bytes, key.c_str(), c.busbw());
    }
    std::printf("}\n");
    return;
  }
  std::printf("pleshard run: %s, storage %s, exchange %s, collectives over %s%s\n", r.topology.describe().c_str(),
              to_string(r.storage), r.exchange.c_str(), r.backend.c_str(), r.cuda_graph ? ", CUDA graphs" : "");
  if (!r.backend_note.empty()) std::printf("  note: %s\n", r.backend_note.c_str());
  std::printf("  requests %" PRId64 ", tokens %" PRId64 ", steps %" PRId64 ", parts %" PRId64 " (%" PRId64
              " resumed)\n",
              r.requests, r.tokens, r.steps, r.parts, r.parts_resumed);
  std::printf(
      "  tables loaded: %.4g GB in %.3f s (all ranks' bytes over the slowest rank's time: %.3g GB/s), peak resident "
      "memory after it %.4g GB (largest rank)\n",
      r.load_bytes * 1e-9, r.load_seconds, load_rate * 1e-9, r.load_peak_resident * 1e-9);
  std::printf("  wall %.3f s: %.4g tokens/s, %.4g rows/s\n", r.seconds, tokens_per_s, rows_per_s);
  std::printf("  steps (max over ranks) %.3f s, p50 %.1f us, p99 %.1f us (rank 0)", r.times.steps, r.step_p50 * 1e6,
              r.step_p99 * 1e6);
  if (r.times.graph > 0)
    std::printf(", of which CUDA graph replays %.3f s (%" PRId64 " graphs)", r.times.graph, r.graphs_captured);
  std::printf("\n  phases (max over ranks):");
  for (int p = 0; p < k_step_phases; ++p)
    std::printf(" %s %.3f s%s", to_string(static_cast<StepPhase>(p)), r.times.phase[static_cast<std::size_t>(p)],
                p + 1 < k_step_phases ? "," : "\n");
  const double between =
      r.traffic.tokens > 0 ? r.traffic.bytes_between_nodes / static_cast<double>(r.traffic.tokens) : 0;
  std::printf("  exchange %s: %.4g bytes sent per rank per token (%.4g between nodes); ids looked up %" PRId64
              ", sent to owners %" PRId64 " (deduplicated), rows sent %" PRId64 "; %.1f%% of the steps' time\n",
              r.exchange.c_str(), r.bytes_per_token(), between, r.traffic.ids, r.traffic.ids_sent, r.traffic.rows_sent,
              100 * r.exchange_share());
  if (!r.cache.empty())
    std::printf("  cache: static part filled from the %s tier in %.3f s after the load (max over ranks)\n",
                to_string(r.storage), r.cache_fill_seconds);
  for (std::size_t d = 0; d < r.cache.size(); ++d) {
    const CacheReport& c = r.cache[d];
    const double lookups = static_cast<double>(c.hits + c.misses + c.repeats);
    const double steps = static_cast<double>(std::max<std::int64_t>(1, r.steps));
    const auto share = [&](std::int64_t n) { return lookups > 0 ? 100 * static_cast<double>(n) / lookups : 0.0; };
    std::printf("  cache, layer %zu: %" PRId64 " static + %" PRId64
                " dynamic rows (all ranks); of %.0f lookups, hits %" PRId64
                " (%.1f%%), repeats of a miss in its step %" PRId64 " (%.1f%%), rows read from the %s tier %" PRId64
                " (%.1f%%); per step (all ranks) %.4g hits, %.4g reads\n",
                d, c.static_rows, c.dynamic_rows, lookups, c.hits, share(c.hits), c.repeats, share(c.repeats),
                to_string(r.storage), c.misses, share(c.misses), static_cast<double>(c.hits) / steps,
                static_cast<double>(c.misses) / steps);
  }
  std::printf("  embeddings copied to host %.4g GB, written %.4g GB in %.3f s (%.3g GB/s per writer)\n",
              r.host_copy_bytes * 1e-9, r.bytes_written * 1e-9, r.write_seconds, write_rate * 1e-9);
  std::printf("  %-22s %6s %8s %12s %10s %10s\n", "collective (rank 0)", "ranks", "calls", "bytes", "algbw GB/s",
              "busbw GB/s");
  for (const auto& c : r.collectives)
    std::printf("  %-22s %6d %8" PRId64 " %12.4g %10.3f %10.3f\n", c.name.c_str(), c.ranks, c.calls, c.bytes,
                c.algbw() * 1e-9, c.busbw() * 1e-9);
  if (!o.summary_only) std::printf("  output %s\n", o.inputs.out.c_str());
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
  cmd->add_option("--storage", in.storage,
                  "Storage tier: host (CPU), device (GPU memory), pinned (host memory read by the GPU), "
                  "disk (rows read from the checkpoint each step)")
      ->check(CLI::IsMember({"host", "device", "pinned", "disk"}))
      ->capture_default_str();
  cmd->add_option(
         "--exchange", in.exchange,
         "How rows reach the ranks that need them: owner (distinct ids to their owners, stored rows back), "
         "gather-reduce (tokens gathered, partial rows all-reduced), reduce-scatter (partial rows "
         "reduce-scattered to their ranks), hierarchical (owner in two levels: within the node, then across nodes; "
         "nodes from MPI or PLESHARD_RANKS_PER_NODE), or auto (owner where an ETP group of several ranks exchanges "
         "and no CUDA graph is asked for, else gather-reduce)")
      ->check(CLI::IsMember({"auto", "gather-reduce", "reduce-scatter", "owner", "hierarchical"}))
      ->capture_default_str();
  cmd->add_option("--step-tokens", in.job.schedule.step_tokens, "Token budget of one step")
      ->check(step_tokens_option())
      ->capture_default_str();
  cmd->add_option("--decode-tokens", in.job.schedule.decode_tokens,
                  "Last tokens of each request fed one per step, like decoding")
      ->check(finite_in(0, k_max_step_tokens, "a whole number of tokens from 0 to 16777216"))
      ->capture_default_str();
  cmd->add_option("--out-dtype", in.out_dtype, "float32, bfloat16 or float16")
      ->check(CLI::IsMember({"float32", "bfloat16", "float16"}))
      ->capture_default_str();
  cmd->add_option("--part-tokens", in.job.part_tokens, "Tokens per output part (the resume unit)")
      ->check(finite_in(1, 1e18, "a whole number of tokens >= 1"))
      ->capture_default_str();
  cmd->add_option("--layer-prefix", in.layer_prefix, "safetensors tensor prefix; {L} is the 0-based decoder layer");
  cmd->add_flag("--cuda-graph", in.job.cuda_graph,
                "Replay steps from CUDA graphs, one per power-of-two step size (device and pinned tiers; NCCL)");
  cmd->add_option("--collective-timeout", in.job.collective_timeout_s,
                  "Seconds a step may make no progress before a stalled peer ends the job")
      ->check(finite_positive())
      ->capture_default_str();
  add_token_map_option(*cmd, in.token_map);
  add_cache_options(*cmd, in.job.cache);
  add_disk_reads_option(*cmd, in.job.disk_reads);
  cmd->add_flag("--quiet", o->quiet, "No progress lines");
  cmd->add_flag("--json", o->json, "Print the final report as one JSON line");
  cmd->callback([&action, o, synthetic, requests, out, summary] {
    if (requests->count() == 0 && synthetic->count() == 0) throw CLI::RequiredError("--requests or --synthetic");
    if (out->count() == 0 && summary->count() == 0) throw CLI::RequiredError("--out or --summary-only");
    if (synthetic->count() > 0) o->inputs.synthetic = o->synthetic;
    action = [o] {
      double last = -1;
      if (!o->quiet)
        o->inputs.job.progress = [&last](const JobProgress& p) {
          if (p.seconds - last < 1.0 && p.tokens_done != p.tokens) return;
          last = p.seconds;
          const double rate = static_cast<double>(p.tokens_done) / std::max(p.seconds, 1e-9);
          std::fprintf(
              stderr,
              "pleshard run: %" PRId64 "/%" PRId64 " requests, %" PRId64 "/%" PRId64
              " tokens (%.0f%%)  %.4g tokens/s  ETA %.0f s\n",
              p.requests_done, p.requests, p.tokens_done, p.tokens,
              p.tokens > 0 ? 100.0 * static_cast<double>(p.tokens_done) / static_cast<double>(p.tokens) : 100.0, rate,
              rate > 0 ? static_cast<double>(p.tokens - p.tokens_done) / rate : 0.0);
        };
      const BatchJobReport report = run_job(MPI_COMM_WORLD, o->inputs);
      if (world_rank() == 0) print_report(report, *o);
      return 0;
    };
  });
}

}  // namespace pleshard::app
