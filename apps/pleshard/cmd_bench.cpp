// pleshard bench hash: kernel throughput, validated, as a table and JSON lines.

#include <cinttypes>
#include <cstdio>
#include <string>

#include "bench/hash_bench.hpp"
#include "cli.hpp"
#include "config/model_config.hpp"
#include "core/collective.hpp"

#include <nlohmann/json.hpp>

namespace pleshard::app {

namespace {

struct BenchOptions {
  std::string config;
  HashBenchOptions hash;
  bool no_cuda = false;
  bool no_host = false;
};

// A model shaped like the real ones: 16 heads (orders 2..3, 8 heads each), 160-value rows.
ModelConfig default_bench_config() {
  return parse_model_config(nlohmann::json{{"vocab_size", 200019},
                                           {"eos_token_id", 199999},
                                           {"num_hidden_layers", 4},
                                           {"ngram_size", 3},
                                           {"heads_per_ngram", 8},
                                           {"ple_embed_dim", 2560},
                                           {"ple_layer_ids", {1}}},
                            "built-in bench config");
}

void print_hash_results(const std::vector<HashBenchResult>& results, int ranks) {
  std::printf("# pleshard bench hash: %d rank(s); seconds = median per batch, max over ranks\n",
              ranks);
  std::printf("%-6s %10s %6s %8s %12s %14s %14s %7s\n", "kernel", "tokens", "heads", "repeats",
              "seconds", "tokens/s", "ids/s", "#wrong");
  for (const auto& r : results)
    std::printf("%-6s %10" PRId64 " %6d %8d %12.4e %14.4e %14.4e %7" PRId64 "\n", r.kernel.c_str(),
                r.tokens, r.heads, r.repeats, r.seconds, r.tokens_per_second(),
                r.ids_per_second(), r.wrong);
  for (const auto& r : results)
    std::printf("{\"bench\": \"hash\", \"kernel\": \"%s\", \"ranks\": %d, \"tokens\": %" PRId64
                ", \"heads\": %d, \"seconds\": %.6e, \"tokens_per_s\": %.6e, \"ids_per_s\": %.6e"
                ", \"wrong\": %" PRId64 "}\n",
                r.kernel.c_str(), ranks, r.tokens, r.heads, r.seconds, r.tokens_per_second(),
                r.ids_per_second(), r.wrong);
}

}  // namespace

void add_bench_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks (validated; JSON lines)");
  bench->require_subcommand(1);
  CLI::App* hash = bench->add_subcommand("hash", "n-gram hashing kernels: tokens/s and ids/s");
  hash->add_option("--config", o->config, "Model config.json (default: built-in, 16 heads)");
  hash->add_option("--tokens", o->hash.batch_tokens, "Batch sizes in tokens")
      ->capture_default_str();
  hash->add_option("--min-seconds", o->hash.min_seconds, "Least time spent per case")
      ->capture_default_str();
  hash->add_flag("--no-cuda", o->no_cuda, "Skip the CUDA kernel");
  hash->add_flag("--no-host", o->no_host, "Skip the host kernel");
  hash->callback([&action, o] {
    action = [o] {
      o->hash.cuda = !o->no_cuda;
      o->hash.host = !o->no_host;
      const ModelConfig config = collective_try(MPI_COMM_WORLD, [&] {
        return o->config.empty() ? default_bench_config() : load_model_config(o->config);
      });
      const auto results = run_hash_bench(MPI_COMM_WORLD, config, o->hash);
      int ranks = 1;
      MPI_Comm_size(MPI_COMM_WORLD, &ranks);
      if (world_rank() == 0) print_hash_results(results, ranks);
      std::int64_t wrong = 0;
      for (const auto& r : results) wrong += r.wrong;
      return wrong == 0 ? 0 : 1;
    };
  });
}

}  // namespace pleshard::app
