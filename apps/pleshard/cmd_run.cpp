// pleshard run: the batch job under mpirun/srun. This stage hashes every PLE layer of every
// request, step by step, with requests balanced over the ranks by tokens.

#include <cinttypes>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

#include "cli.hpp"
#include "config/model_config.hpp"
#include "core/collective.hpp"
#include "engine/hash_job.hpp"
#include "io/requests.hpp"

namespace pleshard::app {

namespace {

struct RunOptions {
  std::string config;
  std::string requests;
  SyntheticRequestsSpec synthetic;
  bool use_synthetic = false;
  StepSchedule schedule;
  bool quiet = false;
  bool json = false;
};

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  void operator()(std::int64_t done, std::int64_t total, double seconds) {
    if (!enabled_ || (seconds - last_ < 1.0 && done != total)) return;
    last_ = seconds;
    const double rate = done / std::max(seconds, 1e-9);
    std::fprintf(stderr, "[rank 0] %" PRId64 "/%" PRId64 " tokens  %.3g tokens/s  ETA %.1f s\n",
                 done, total, rate, (total - done) / std::max(rate, 1e-9));
  }

 private:
  bool enabled_;
  double last_ = 0;
};

void print_report(const HashJobReport& r, const ModelConfig& config, bool json) {
  const double tokens_per_s = r.tokens / r.seconds;
  if (json) {
    std::printf("{\"job\": \"run\", \"ranks\": %d, \"requests\": %" PRId64 ", \"tokens\": %" PRId64
                ", \"ple_layers\": %d, \"heads\": %d, \"steps\": %" PRId64
                ", \"seconds\": %.6f, \"hash_seconds\": %.6f, \"tokens_per_s\": %.6g"
                ", \"ids_per_s\": %.6g, \"id_digest\": \"%016" PRIx64 "\"}\n",
                r.ranks, r.requests, r.tokens, config.num_ple_layers(), config.total_heads(),
                r.max_steps, r.seconds, r.hash_seconds, tokens_per_s, r.ids / r.seconds,
                r.id_digest);
    return;
  }
  std::printf("pleshard run: %d ranks, %" PRId64 " requests, %" PRId64 " tokens, %d PLE layers x %d heads\n",
              r.ranks, r.requests, r.tokens, config.num_ple_layers(), config.total_heads());
  std::printf("  steps (max per rank) %" PRId64 "\n", r.max_steps);
  std::printf("  wall time            %.3f s (hash %.3f s, max over ranks)\n", r.seconds,
              r.hash_seconds);
  std::printf("  throughput           %.4g tokens/s, %.4g ids/s\n", tokens_per_s,
              r.ids / r.seconds);
  std::printf("  id digest            %016" PRIx64 " (equal for any ranks and step size)\n",
              r.id_digest);
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Batch job: hash every PLE layer of every request, step by step, across ranks");
  cmd->add_option("--config", o->config, "Model config.json")->required();
  auto* requests = cmd->add_option("--requests", o->requests,
                                   "Requests JSONL, one {\"id\": ..., \"tokens\": [...]} a line");
  auto* synthetic = cmd->add_option("--synthetic", o->synthetic.count,
                                    "Use N synthetic Zipf-like requests instead of --requests");
  requests->excludes(synthetic);
  cmd->add_option("--synthetic-min-tokens", o->synthetic.min_tokens, "Shortest synthetic request")
      ->capture_default_str();
  cmd->add_option("--synthetic-max-tokens", o->synthetic.max_tokens, "Longest synthetic request")
      ->capture_default_str();
  cmd->add_option("--synthetic-seed", o->synthetic.seed, "Seed of the synthetic requests")
      ->capture_default_str();
  cmd->add_option("--step-tokens", o->schedule.step_tokens, "Token budget of one step")
      ->capture_default_str();
  cmd->add_option("--decode-tokens", o->schedule.decode_tokens,
                  "Last tokens of each request fed one per step, like decoding")
      ->capture_default_str();
  cmd->add_flag("--quiet", o->quiet, "No progress lines");
  cmd->add_flag("--json", o->json, "Print the final report as one JSON line");
  cmd->callback([&action, o, synthetic, requests] {
    if (requests->count() == 0 && synthetic->count() == 0)
      throw CLI::RequiredError("--requests or --synthetic");
    o->use_synthetic = synthetic->count() > 0;
    action = [o] {
      const int rank = world_rank();
      const auto [config, request_list] = collective_try(MPI_COMM_WORLD, [&] {
        ModelConfig c = load_model_config(o->config);
        SyntheticRequestsSpec spec = o->synthetic;
        spec.vocab_size = c.vocab_size;
        // Validates --step-tokens and --decode-tokens before any work starts.
        StepScheduler(std::span<const Request>(), c.ngram_size, c.eos_token_id, o->schedule);
        auto list = o->use_synthetic ? make_synthetic_requests(spec)
                                     : load_requests_jsonl(o->requests);
        return std::make_pair(std::move(c), std::move(list));
      });
      ProgressLine progress(rank == 0 && !o->quiet);
      const HashJobReport report =
          run_hash_job(MPI_COMM_WORLD, config, request_list, o->schedule, std::ref(progress));
      if (rank == 0) print_report(report, config, o->json);
      return 0;
    };
  });
}

}  // namespace pleshard::app
