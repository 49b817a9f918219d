// pleshard bench hash|lookup|exchange|step|load: throughput, validated, as a table and JSON
// lines, or JSON lines or CSV alone.

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <string>

#include "bench/bench_output.hpp"
#include "bench/bench_progress.hpp"
#include "bench/bench_tables.hpp"
#include "bench/exchange_bench.hpp"
#include "bench/hash_bench.hpp"
#include "bench/load_bench.hpp"
#include "bench/lookup_bench.hpp"
#include "bench/step_bench.hpp"
#include "ckpt/ple_checkpoint.hpp"
#include "ckpt/synthetic.hpp"
#include "cli.hpp"
#include "core/collective.hpp"
#include "core/watched_wait.hpp"
#include "dist/communicator_factory.hpp"
#include "engine_option_cli.hpp"
#include "model/model_config.hpp"
#include "option_checks.hpp"
#include "store/placement.hpp"
#include "store/storage_tier.hpp"

#include <nlohmann/json.hpp>

namespace pleshard::app {

namespace {

// Each value's name as the library writes it (choices and defaults typed once, there).
template <typename E>
std::vector<std::string> names_of(std::initializer_list<E> values) {
  std::vector<std::string> names;
  for (const E value : values) names.emplace_back(to_string(value));
  return names;
}

// The strategies whose collectives bench exchange times (each one's own; auto and
// hierarchical are made of them).
constexpr std::initializer_list<ExchangeStrategy> k_bench_exchanges = {
    ExchangeStrategy::gather_reduce, ExchangeStrategy::reduce_scatter, ExchangeStrategy::owner};

struct BenchOptions {
  std::string config;
  std::string token_map;
  HashBenchOptions hash;
  LookupBenchOptions lookup;
  ExchangeBenchOptions exchange;
  StepBenchOptions step;
  LoadBenchOptions load;
  std::string step_format = "bf16";
  std::int64_t step_rows = 1 << 24;
  std::vector<std::string> modes{"eager", "graph"};
  std::vector<std::string> exchanges{"auto"};
  std::vector<std::string> bench_exchanges = names_of(k_bench_exchanges);
  std::vector<std::string> formats =
      names_of({RowFormat::f32, RowFormat::bf16, RowFormat::f16, RowFormat::fp8, RowFormat::nvfp4});
  std::vector<std::string> tiers{"host"};
  std::vector<std::string> backends{"mpi"};
  // The engine's options bench step and lookup take from the library's table, copied into
  // their options when the command is chosen.
  EngineInputs engine;
  BatchJobOptions job;
  bool no_cuda = false;
  bool no_host = false;
  BenchFormat format = BenchFormat::table;
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

// Qwen3.8-Flash-Next's PLE shape (jobs/models/qwen3.8-flash-next/config.json: one layer of
// 16 heads of 160 values) over a table of at least `rows` rows instead of 320M.
ModelConfig qwen_shaped_config(std::int64_t rows, const std::string& format) {
  nlohmann::json j{{"vocab_size", 248320},
                   {"eos_token_id", 248044},
                   {"hidden_size", 2560},
                   {"num_hidden_layers", 48},
                   {"ngram_size", 3},
                   {"heads_per_ngram", 8},
                   {"ple_embed_dim", 2560},
                   {"ngram_vocab_size_base", (rows + 15) / 16},
                   {"make_ngram_vocab_size_divisible_by", 128},
                   {"split_ngram_parts", 128},
                   {"seed", 1234},
                   {"ple_layer_ids", {2}}};
  if (const TableQuantization q = config_quantization(parse_row_format(format)); q != TableQuantization::none)
    j["ple_embedding_dtype"] = to_string(q);
  return parse_model_config(j, "built-in Qwen3.8-Flash-Next-shaped config");
}

// --json or --csv (one at most): the results alone, for programs, instead of the table.
void add_format_options(CLI::App& cmd, BenchFormat& format) {
  CLI::Option* json = cmd.add_flag_callback(
      "--json", [&format] { format = BenchFormat::json; }, "JSON lines alone (no table)");
  CLI::Option* csv = cmd.add_flag_callback(
      "--csv", [&format] { format = BenchFormat::csv; }, "CSV with a header line alone (no table)");
  json->excludes(csv);
}

int world_size() {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  return ranks;
}

// Rank 0 prints; every rank exits 1 where a result was wrong.
template <typename Result>
int finish(const BenchTable& table, const std::vector<Result>& results, BenchFormat format) {
  if (world_rank() == 0) print_bench(table, format, stdout, stderr);
  std::int64_t wrong = 0;
  for (const auto& r : results) wrong += r.wrong;
  return wrong == 0 ? 0 : 1;
}

}  // namespace

void add_bench_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks (validated; JSON lines)");
  bench->require_subcommand(1);
  CLI::App* hash = bench->add_subcommand("hash", "n-gram hashing kernels: tokens/s and ids/s");
  hash->add_option("--config", o->config, "Model config.json (default: built-in, 16 heads)")->check(path_given());
  hash->add_option("--tokens", o->hash.batch_tokens, "Batch sizes in tokens")
      ->check(step_tokens_option())
      ->capture_default_str();
  hash->add_option("--min-seconds", o->hash.min_seconds, "Least time spent per case")
      ->check(finite_in(0, 1e6, "a finite number of seconds >= 0"))
      ->capture_default_str();
  add_token_map_option(*hash, o->token_map);
  hash->add_flag("--no-cuda", o->no_cuda, "Skip the CUDA kernel");
  hash->add_flag("--no-host", o->no_host, "Skip the host kernel");
  add_format_options(*hash, o->format);
  hash->callback([&action, o] {
    action = [o] {
      o->hash.cuda = !o->no_cuda;
      o->hash.host = !o->no_host;
      const ModelConfig config = collective_try(MPI_COMM_WORLD, [&] {
        return o->config.empty() ? default_bench_config() : load_model_config(o->config, o->token_map);
      });
      const auto results = run_hash_bench(MPI_COMM_WORLD, config, o->hash);
      BenchTable table = hash_table(results, world_size());
      if (o->hash.cuda && !why_no_cuda().empty())
        table.skipped.push_back("CUDA cases skipped: the cuda kernel: " + why_no_cuda());
      return finish(table, results, o->format);
    };
  });

  CLI::App* exchange = bench->add_subcommand("exchange", "Collectives of one step's exchange: algbw and busbw");
  exchange->add_option("--tokens", o->exchange.step_tokens, "Tokens per rank per step")
      ->check(step_tokens_option())
      ->capture_default_str();
  exchange->add_option("--heads", o->exchange.heads, "Ids per token")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  exchange->add_option("--ple-embed-dim", o->exchange.ple_embed_dim, "Values per token")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  exchange->add_option("--min-seconds", o->exchange.min_seconds, "Least time spent per case")
      ->check(finite_in(0, 1e6, "a finite number of seconds >= 0"))
      ->capture_default_str();
  exchange->add_option("--row-bytes", o->exchange.row_bytes, "owner: bytes of a stored row sent back")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  exchange->add_option("--id-bytes", o->exchange.id_bytes, "owner: bytes of an owner-local index (2, 4 or 8)")
      ->check(CLI::IsMember({2, 4, 8}))
      ->capture_default_str();
  exchange
      ->add_option("--exchange", o->bench_exchanges,
                   "Strategies whose collectives are timed: gather-reduce, reduce-scatter, owner")
      ->check(CLI::IsMember(names_of(k_bench_exchanges)))
      ->capture_default_str();
  exchange
      ->add_option("--backend", o->backends,
                   "Collective backends: mpi (host memory), mpi-staged (GPU memory through host copies), "
                   "nccl (GPU memory, one GPU per rank)")
      ->check(CLI::IsMember(names_of({CollectiveBackend::mpi, CollectiveBackend::mpi_staged, CollectiveBackend::nccl})))
      ->capture_default_str();
  add_format_options(*exchange, o->format);
  exchange->callback([&action, o] {
    action = [o] {
      collective_try(MPI_COMM_WORLD, [&] {
        o->exchange.strategies.clear();
        for (const auto& name : o->bench_exchanges) o->exchange.strategies.push_back(parse_exchange_strategy(name));
      });
      std::vector<ExchangeBenchResult> results;
      for (const auto& name : o->backends) {
        const auto some = run_exchange_bench(MPI_COMM_WORLD, parse_collective_backend(name), o->exchange);
        results.insert(results.end(), some.begin(), some.end());
      }
      return finish(exchange_table(results), results, o->format);
    };
  });

  CLI::App* step = bench->add_subcommand("step", "Whole engine steps of every PLE layer: p50/p99 latency, tokens/s");
  step->add_option("--config", o->config,
                   "Model config.json (default: Qwen3.8-Flash-Next's PLE shape over --rows rows)")
      ->check(path_given());
  step->add_option("--checkpoint", o->step.checkpoint,
                   "Checkpoint to serve (default: synthetic tables generated where the tier keeps them)")
      ->check(path_given());
  step->add_option("--rows", o->step_rows, "Rows of the built-in config's table (at least)")->capture_default_str();
  step->add_option("--format", o->step_format, "Row format of synthetic tables")
      ->check(CLI::IsMember(row_format_name_list()))
      ->capture_default_str();
  step->add_option("--storage", o->tiers, "Storage tiers: " + storage_tier_help())
      ->check(CLI::IsMember(storage_tier_names()))
      ->capture_default_str();
  step->add_option("--placement", o->step.placement,
                   "One engine with the tables so placed instead of one per --storage tier: auto, or D=TIER,... "
                   "per table (as run's)");
  step->add_option("--tokens", o->step.tokens, "Tokens per DP rank and step")
      ->check(step_tokens_option())
      ->capture_default_str();
  step->add_option("--exchange", o->exchanges,
                   "Exchange strategies, side by side: auto, gather-reduce, reduce-scatter, owner, hierarchical")
      ->check(CLI::IsMember(choices_of(Option::exchange)))
      ->capture_default_str();
  step->add_option("--modes", o->modes, "eager, graph (CUDA graph replay, where allowed)")
      ->check(CLI::IsMember({"eager", "graph"}))
      ->capture_default_str();
  step->add_option("--requests", o->step.requests, "Token stream: JSONL or .h5 requests (default: synthetic)")
      ->check(path_given());
  step->add_option("--min-seconds", o->step.min_seconds, "Least time spent per case")
      ->check(finite_in(0, 1e6, "a finite number of seconds >= 0"))
      ->capture_default_str();
  step->add_option("--distinct-steps", o->step.distinct_steps,
                   "Steps of the token stream cycled through: rows a small step reads may stay in caches "
                   "(the GPU's L2, a row cache) from one cycle to the next unless the cycle is long")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  add_engine_options(*step, EngineCommand::bench_step, EngineTarget{&o->engine, &o->job});
  add_format_options(*step, o->format);
  step->callback([&action, o] {
    StepBenchOptions& s = o->step;
    s.tp = o->engine.tp;
    s.etp = o->engine.etp;
    s.cache = o->job.cache;
    s.disk_reads = o->job.disk_reads;
    s.host_reads = o->job.host_reads;
    s.owner_gpu_plan_from = o->job.owner_gpu_plan_from;
    s.owner_fixed_below = o->job.owner_fixed_below;
    s.collective_timeout_s = o->job.collective_timeout_s;
    // Every wait for other ranks from here to MPI_Finalize is watched, as run's are.
    set_stall_limit(o->step.collective_timeout_s);
    action = [o] {
      collective_try(MPI_COMM_WORLD, [&] {
        if (o->step_rows < 16) throw InputError("bench step: --rows must be >= 16");
        const std::string& token_map = o->engine.token_map;
        o->step.config = !o->config.empty()            ? load_model_config(o->config, token_map)
                         : !o->step.checkpoint.empty() ? load_checkpoint_config(o->step.checkpoint, {}, token_map)
                                                       : qwen_shaped_config(o->step_rows, o->step_format);
        o->step.format = o->config.empty() ? parse_row_format(o->step_format) : default_format(o->step.config);
        o->step.dtype = parse_out_dtype(o->engine.out_dtype);
        o->step.tiers.clear();
        for (const auto& tier : o->tiers) o->step.tiers.push_back(parse_storage_tier(tier));
        if (!o->step.placement.empty() && o->step.placement != "auto")
          (void)parse_placement(o->step.placement, o->step.config.num_ple_layers());
        o->step.exchanges.clear();
        for (const auto& name : o->exchanges) o->step.exchanges.push_back(parse_exchange_strategy(name));
        o->step.eager = std::find(o->modes.begin(), o->modes.end(), "eager") != o->modes.end();
        o->step.graph = std::find(o->modes.begin(), o->modes.end(), "graph") != o->modes.end();
        for (const std::int64_t t : o->step.tokens)
          if (t < 1) throw InputError("bench step: --tokens must be >= 1, got " + std::to_string(t));
        const CacheOptions& cache = o->step.cache;
        if (!cache.profile.empty() && !cache.enabled() && o->step.placement != "auto")
          throw InputError("--cache-profile " + cache.profile.string() +
                           ": needs a cache (--cache-rows or --cache-gb, or --placement auto)");
        if (cache.enabled() && o->step.placement.empty() &&
            std::none_of(o->step.tiers.begin(), o->step.tiers.end(),
                         [](StorageTier t) { return capabilities_of(t).cacheable; }))
          throw InputError("bench step: a row cache stands in front of the pinned or disk tier; --storage has neither");
      });
      const StepBenchRun run = run_step_bench(MPI_COMM_WORLD, o->step);
      BenchTable table = step_table(run.results);
      for (const auto& why : run.skipped) table.skipped.push_back("CUDA cases skipped: " + why);
      return finish(table, run.results, o->format);
    };
  });

  CLI::App* load = bench->add_subcommand("load", "A checkpoint into the storage tiers, against its files' read rate");
  load->add_option("--checkpoint", o->load.checkpoint, "Checkpoint directory or file")->required()->check(path_given());
  load->add_option("--config", o->load.config, "Model config.json (default: beside the checkpoint)")
      ->check(path_given());
  CLI::Option* load_storage =
      load->add_option("--storage", o->tiers,
                       "Storage tiers: " + storage_tier_help() + " (default: device where a GPU is present, else host)")
          ->check(CLI::IsMember(storage_tier_names()));
  load->add_flag("--cold", o->load.cold, "Drop the files' cached pages before every read");
  add_format_options(*load, o->format);
  load->callback([&action, o, load_storage] {
    const bool default_tier = load_storage->count() == 0;
    if (default_tier) o->tiers = {gpu_available() ? "device" : "host"};
    action = [o, default_tier] {
      collective_try(MPI_COMM_WORLD, [&] {
        o->load.tiers.clear();
        for (const auto& tier : o->tiers) o->load.tiers.push_back(parse_storage_tier(tier));
      });
      const auto results = run_load_bench(MPI_COMM_WORLD, o->load);
      BenchTable table = load_table(results, world_size(), o->load);
      if (default_tier && !why_no_cuda().empty())
        table.skipped.push_back(
            "CUDA cases skipped: the device tier (the default with a GPU; the host tier instead): " + why_no_cuda());
      return finish(table, results, o->format);
    };
  });

  CLI::App* lookup = bench->add_subcommand("lookup", "Storage-tier lookups: rows/s and GB/s per format");
  lookup->add_option("--storage", o->tiers, "Storage tiers: " + storage_tier_help())
      ->check(CLI::IsMember(storage_tier_names()))
      ->capture_default_str();
  lookup
      ->add_option("--disk-dir", o->lookup.disk_dir,
                   "Where the disk tier's checkpoint is written (an existing directory)")
      ->check(path_given())
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  lookup->add_option("--formats", o->formats, "Row formats")
      ->check(CLI::IsMember(row_format_name_list()))
      ->capture_default_str();
  lookup->add_option("--ids", o->lookup.ids_per_step, "Ids per step")
      ->check(finite_in(1, 1 << 28, "a whole number of ids from 1 to 268435456"))
      ->capture_default_str();
  lookup->add_option("--rows", o->lookup.rows, "Table rows")->check(CLI::PositiveNumber)->capture_default_str();
  lookup
      ->add_option("--beside-rows", o->lookup.beside_rows,
                   "Rows of the device table looked up beside the pinned one (pinned|device; default: --rows)")
      ->check(CLI::PositiveNumber);
  lookup->add_option("--head-dim", o->lookup.head_dim, "Values per row")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_engine_option(*lookup, engine_option(Option::out_dtype), EngineTarget{&o->engine, &o->job});
  lookup->add_option("--min-seconds", o->lookup.min_seconds, "Least time spent per case")
      ->check(finite_in(0, 1e6, "a finite number of seconds >= 0"))
      ->capture_default_str();
  lookup
      ->add_option("--uva-blocks-per-sm", o->lookup.uva_blocks_per_sm,
                   "Pinned tier: blocks per SM of the gather over PCIe (0: no cap; default: the library's)")
      ->check(CLI::Range(0, 64));
  add_format_options(*lookup, o->format);
  lookup->callback([&action, o] {
    action = [o] {
      collective_try(MPI_COMM_WORLD, [&] {
        o->lookup.formats.clear();
        for (const auto& f : o->formats) o->lookup.formats.push_back(parse_row_format(f));
        o->lookup.out_dtype = parse_out_dtype(o->engine.out_dtype);
        if (o->lookup.rows < 1 || o->lookup.head_dim < 16 || o->lookup.head_dim % 16 != 0)
          throw InputError("bench lookup: need --rows >= 1 and --head-dim a positive multiple of 16");
        for (const RowFormat f : o->lookup.formats)
          if (!kernels::whole_blocks(f, o->lookup.head_dim))
            throw InputError("bench lookup: --head-dim " + std::to_string(o->lookup.head_dim) +
                             " is not a multiple of " + to_string(f) + "'s blocks of " +
                             std::to_string(kernels::block_scaling(f).block) + " values");
        o->lookup.tiers.clear();
        for (const auto& tier : o->tiers) o->lookup.tiers.push_back(parse_storage_tier(tier));
      });
      const auto results = run_lookup_bench(MPI_COMM_WORLD, o->lookup);
      return finish(lookup_table(results, world_size(), o->lookup), results, o->format);
    };
  });
}

}  // namespace pleshard::app
