#include "bench/step_bench.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "bench/bench_progress.hpp"
#include "ckpt/ple_checkpoint.hpp"
#include "ckpt/synthetic.hpp"
#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/mpi_check.hpp"
#include "core/watched_collectives.hpp"
#include "engine/embed.hpp"
#include "engine/ple_engine.hpp"
#include "hash/ngram_ids.hpp"
#include "io/requests.hpp"
#include "job/step_scheduler.hpp"

namespace pleshard {

namespace {

constexpr std::uint64_t k_table_seed = 2024;

// The first `count` steps of `requests` scheduled as `pleshard run` schedules them (chunked
// prefill of `tokens` per step), cycling through the requests again as needed.
std::vector<TokenBatch> step_batches(const std::vector<Request>& requests, const ModelConfig& config,
                                     std::int64_t tokens, int count) {
  std::vector<TokenBatch> batches;
  if (requests.empty()) return batches;
  while (static_cast<int>(batches.size()) < count) {
    StepScheduler scheduler(requests, config.ngram_size, {tokens, 0});
    TokenBatch batch(config.ngram_size);
    std::vector<StepSlice> slices;
    while (static_cast<int>(batches.size()) < count && scheduler.next_step(batch, slices)) batches.push_back(batch);
  }
  return batches;
}

// Every `ranks`-th request from `first`: a DP rank's share of the stream.
std::vector<Request> share_of(const std::vector<Request>& all, int ranks, int first) {
  std::vector<Request> mine;
  for (std::size_t r = static_cast<std::size_t>(first); r < all.size(); r += static_cast<std::size_t>(ranks))
    mine.push_back(all[r]);
  return mine;
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  const auto at = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(at), values.end());
  return values[at];
}

// Elements of a step's output that differ from the rows of the checkpoint, read one by one
// and decoded by the shared core.
std::int64_t count_wrong(const PleCheckpoint& checkpoint, const ModelConfig& config, const TokenBatch& batch,
                         const StepOutput& out, PleEngine& engine) {
  std::int64_t wrong = 0;
  const OutDtype dtype = engine.dtype();
  for (int d = 0; d < config.num_ple_layers(); ++d) {
    const PleTableInfo& info = checkpoint.table(d);
    const TableSpec spec = hashing_spec(derive_table_spec(config, d), info, checkpoint.path());
    const std::vector<std::int64_t> ids = compute_ngram_ids(spec, batch);
    const EmbeddingView& view = out.layers[static_cast<std::size_t>(d)];
    const std::vector<std::uint8_t> got = to_host(engine.space(), view);
    const std::size_t row_out = static_cast<std::size_t>(info.layout.head_dim) * kernels::out_bytes(dtype);
    std::vector<std::uint8_t> row(info.layout.row_bytes()), scales(info.layout.scale_bytes()), expected(row_out);
    const int heads = spec.total_heads();
    for (std::int64_t t = 0; t < view.rows; ++t)
      for (int h = 0; h < heads; ++h) {
        const std::int64_t id = ids[static_cast<std::size_t>((view.first + t) * heads + h)];
        checkpoint.read_rows(d, id, id + 1, row, scales);
        const kernels::TableView one{
            info.layout.format, info.layout.head_dim, id, id + 1, row.data(), scales.empty() ? nullptr : scales.data(),
            info.global_scale};
        kernels::decode_row(one, id, dtype, expected.data(), 0);
        wrong +=
            std::memcmp(expected.data(), got.data() + static_cast<std::size_t>(t * heads + h) * row_out, row_out) != 0
                ? 1
                : 0;
      }
  }
  return wrong;
}

}  // namespace

StepBenchRun run_step_bench(MPI_Comm comm, const StepBenchOptions& o) {
  int world = 1;
  int rank = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_size(comm, &world));
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const ModelConfig& config = o.config;
  const Topology topology = collective_try(comm, [&] { return make_topology(world, rank, o.tp, o.etp); });
  const Communicators comms(comm, topology);
  const std::vector<Request> all = collective_try(comm, [&] {
    std::vector<Request> requests;
    if (!o.requests.empty()) {
      requests = load_requests(o.requests);
    } else {
      SyntheticRequestsSpec spec;
      spec.count = 512;
      spec.vocab_size = config.vocab_size;
      requests = make_synthetic_requests(spec);
    }
    // Every DP rank steps through its share of the stream: none may be empty.
    if (static_cast<int>(requests.size()) < topology.dp())
      throw InputError(o.requests.string() + ": " + std::to_string(requests.size()) + " requests for " +
                       std::to_string(topology.dp()) + " DP ranks; bench step needs at least one per DP rank");
    return requests;
  });
  const int dp = topology.dp();
  const int edp = topology.edp();
  const int group_first = topology.etp_group() * edp;
  const std::int64_t most = *std::max_element(o.tokens.begin(), o.tokens.end());

  // Each tier alone, or the one placement asked for.
  struct TierCase {
    std::string name;
    StorageTier tier = StorageTier::host;
    std::vector<StorageTier> placement;
    bool automatic = false;
    TierCapabilities can;
  };
  std::vector<TierCase> cases;
  if (o.placement.empty()) {
    for (const StorageTier tier : o.tiers) cases.push_back({to_string(tier), tier, {}, false, capabilities_of(tier)});
  } else if (o.placement == "auto") {
    cases.push_back({"auto", StorageTier::host, {}, true, {}});
  } else {
    const Placement placement = parse_placement(o.placement, config.num_ple_layers());
    cases.push_back({placement.describe(), StorageTier::host, placement.tiers, false, placement.capabilities()});
  }
  // Whether an engine of this tier case, exchange and cache is benchmarked.
  const auto wanted = [&](const TierCase& tier_case, ExchangeStrategy strategy, bool cached) {
    if (tier_case.can.whole_tables && strategy != o.exchanges.front()) return false;  // nothing is exchanged
    return !cached || (o.cache.enabled() && tier_case.can.cacheable);
  };
  int engines = 0;
  for (const TierCase& tier_case : cases)
    for (const ExchangeStrategy strategy : o.exchanges)
      for (const bool cached : {false, true}) engines += wanted(tier_case, strategy, cached) ? 1 : 0;
  BenchProgress progress("step", engines * static_cast<int>(o.tokens.size()) * ((o.eager ? 1 : 0) + (o.graph ? 1 : 0)),
                         rank == 0);
  StepBenchRun run;
  for (const TierCase& tier_case : cases)
    for (const ExchangeStrategy strategy : o.exchanges)
      for (const bool cached : {false, true}) {
        const StorageTier tier = tier_case.tier;
        const TierCapabilities can = tier_case.can;
        if (!wanted(tier_case, strategy, cached)) continue;
        const ExchangeStrategy exchange = can.whole_tables ? ExchangeStrategy::automatic : strategy;
        CheckpointOptions ckpt_options;
        ckpt_options.collective_io = can.loads_collectively;
        ckpt_options.comm = ckpt_options.collective_io ? comms.world() : MPI_COMM_SELF;
        const std::unique_ptr<PleCheckpoint> checkpoint = collective_try(comm, [&] {
          return o.checkpoint.empty() ? synthetic_checkpoint(config, o.format, k_table_seed)
                                      : open_ple_checkpoint(o.checkpoint, config, ckpt_options);
        });
        EngineOptions engine_options;
        engine_options.dtype = o.dtype;
        engine_options.tier = tier;
        engine_options.placement = tier_case.placement;
        engine_options.auto_placement = tier_case.automatic;
        engine_options.max_tokens = most;
        engine_options.exchange = exchange;
        engine_options.fetch_ahead = false;  // no step names its next: each runs whole
        if (cached) engine_options.cache = o.cache;
        if (tier_case.automatic) {  // its own cache, with the profile's hottest rows
          engine_options.cache.profile = o.cache.profile;
          engine_options.cache.static_share = o.cache.static_share;
        }
        engine_options.disk_reads = o.disk_reads;
        engine_options.host_reads = o.host_reads;
        engine_options.owner_gpu_plan_from = o.owner_gpu_plan_from;
        engine_options.owner_fixed_below = o.owner_fixed_below;
        engine_options.collective_timeout_s = o.collective_timeout_s;
        PleEngine engine(comms, config, *checkpoint, engine_options);
        for (const std::int64_t tokens : o.tokens) {
          // My DP rank's steps and my ETP group's token counts for each.
          std::vector<std::vector<TokenBatch>> group(static_cast<std::size_t>(edp));
          for (int s = 0; s < edp; ++s)
            group[static_cast<std::size_t>(s)] =
                step_batches(share_of(all, dp, group_first + s), config, tokens, o.distinct_steps);
          const std::vector<TokenBatch>& mine = group[static_cast<std::size_t>(topology.etp_dp_rank())];
          std::vector<std::vector<std::int64_t>> counts(mine.size(),
                                                        std::vector<std::int64_t>(static_cast<std::size_t>(edp)));
          for (std::size_t k = 0; k < mine.size(); ++k)
            for (int s = 0; s < edp; ++s) {
              const auto& theirs = group[static_cast<std::size_t>(s)];
              counts[k][static_cast<std::size_t>(s)] = k < theirs.size() ? theirs[k].num_tokens() : 0;
            }
          const auto step = [&](std::size_t k) {
            const std::size_t i = k % mine.size();
            return engine.forward(mine[i], counts[i]);
          };
          for (const bool graph : {false, true}) {
            if ((graph && !o.graph) || (!graph && !o.eager)) continue;
            progress.next(tier_case.name + ", " + engine.exchange() + (cached ? ", cached" : "") + ", " +
                          (graph ? "graph" : "eager") + ", " + std::to_string(tokens) + " tokens");
            std::string refused;  // the same answer on every rank
            try {
              engine.use_cuda_graphs(graph);
            } catch (const InputError& e) {
              refused = e.what();
            }
            if (!refused.empty()) {
              const std::string why = "graph mode of " + tier_case.name + ", the " + engine.exchange() +
                                      " exchange: " + refused + (why_no_cuda().empty() ? "" : "; " + why_no_cuda());
              if (std::find(run.skipped.begin(), run.skipped.end(), why) == run.skipped.end())
                run.skipped.push_back(why);
              continue;
            }
            // Warm-up (graphs captured: at least two steps, for a short bucket's graph of each
            // of the plan's two buffers), then a probe of one round for the step count.
            for (std::size_t k = 0; k < std::max<std::size_t>(2, mine.size()); ++k) (void)step(k);
            engine.wait();
            const std::string what = "bench step: every rank's steps";
            watched_barrier(comm, what);
            double t0 = MPI_Wtime();
            for (std::size_t k = 0; k < mine.size(); ++k) (void)step(k);
            engine.wait();
            double probe = (MPI_Wtime() - t0) / static_cast<double>(mine.size());
            watched_allreduce(&probe, 1, MPI_DOUBLE, MPI_MAX, comm, what);
            const auto steps = static_cast<std::size_t>(
                std::clamp(o.min_seconds / std::max(probe, 1e-9), static_cast<double>(o.min_steps), 100000.0));
            const std::size_t first = engine.stats().step_seconds.size();
            const ExchangeTraffic traffic_before = engine.traffic();
            const PhaseTimes times_before = engine.stats().times;
            const std::vector<CacheReport> cache_before = engine.cache();
            watched_barrier(comm, what);
            t0 = MPI_Wtime();
            for (std::size_t k = 0; k < steps; ++k) (void)step(k);
            engine.wait();
            double wall = MPI_Wtime() - t0;
            // Tokens the timed steps took, this DP rank's (its TP ranks each count them).
            std::int64_t done = 0;
            for (std::size_t k = 0; k < steps; ++k) done += mine[k % mine.size()].num_tokens();
            watched_allreduce(&done, 1, MPI_INT64_T, MPI_SUM, comm, what);
            double looked_up[3] = {0, 0, 0};  // hits, repeats, lookups
            const std::vector<CacheReport> cache_after = engine.cache();
            for (std::size_t d = 0; d < cache_after.size(); ++d) {
              const CacheReport& now = cache_after[d];
              const CacheReport& then = cache_before[d];
              looked_up[0] += static_cast<double>(now.hits - then.hits);
              looked_up[1] += static_cast<double>(now.repeats - then.repeats);
              looked_up[2] +=
                  static_cast<double>(now.hits + now.misses + now.repeats - then.hits - then.misses - then.repeats);
            }
            watched_allreduce(looked_up, 3, MPI_DOUBLE, MPI_SUM, comm, what);
            const ExchangeTraffic moved = engine.traffic() - traffic_before;
            const PhaseTimes& times = engine.stats().times;
            double sums[4] = {moved.bytes_sent, static_cast<double>(moved.tokens),
                              times[StepPhase::gather] + times[StepPhase::combine] - times_before[StepPhase::gather] -
                                  times_before[StepPhase::combine],
                              times.steps - times_before.steps};
            watched_allreduce(sums, 4, MPI_DOUBLE, MPI_SUM, comm, what);
            std::vector<double> latency(engine.stats().step_seconds.begin() + static_cast<std::ptrdiff_t>(first),
                                        engine.stats().step_seconds.end());
            latency.resize(steps);
            watched_allreduce(latency.data(), static_cast<int>(latency.size()), MPI_DOUBLE, MPI_MAX, comm, what);
            watched_allreduce(&wall, 1, MPI_DOUBLE, MPI_MAX, comm, what);
            // The first step again, checked.
            const StepOutput out = step(0);
            engine.wait();
            std::int64_t wrong = count_wrong(*checkpoint, config, mine.front(), out, engine);
            watched_allreduce(&wrong, 1, MPI_INT64_T, MPI_SUM, comm, what);

            StepBenchResult r;
            r.tier = tier_case.automatic ? "auto:" + engine.placement().describe() : tier_case.name;
            r.mode = graph ? "graph" : "eager";
            r.backend = engine.backend();
            r.exchange = engine.exchange();
            r.bytes_per_token = sums[1] > 0 ? sums[0] / sums[1] : 0;
            r.exchange_share = !graph && sums[3] > 0 ? sums[2] / sums[3] : 0;
            r.ranks = world;
            r.tp = topology.tp;
            r.etp = topology.etp;
            r.dp = dp;
            r.layers = config.num_ple_layers();
            r.heads = config.total_heads();
            r.tokens = tokens;
            r.steps = static_cast<std::int64_t>(steps);
            r.p50 = percentile(latency, 0.5);
            r.p99 = percentile(latency, 0.99);
            r.wall = wall;
            r.tokens_done = done / topology.tp;
            r.wrong = wrong;
            r.cached = cached;
            r.hit_rate = looked_up[2] > 0 ? looked_up[0] / looked_up[2] : 0;
            r.repeat_rate = looked_up[2] > 0 ? looked_up[1] / looked_up[2] : 0;
            run.results.push_back(r);
          }
          engine.use_cuda_graphs(false);
        }
      }
  return run;
}

}  // namespace pleshard
