#include "bench/bench_tables.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>

namespace pleshard {

namespace {

constexpr bool k_left = true;

std::string whole(double x) { return fixed(x, 0); }
std::string micros(double seconds) { return fixed(seconds * 1e6, 2); }
std::string percent(double share) { return std::isfinite(share) ? fixed(100 * share, 1) + "%" : "-"; }

// JSON null where there is no value (a share of nothing, a ratio without its reference).
BenchValue or_null(double x) { return std::isfinite(x) ? BenchValue(x) : BenchValue(); }

}  // namespace

BenchTable hash_table(const std::vector<HashBenchResult>& results, int ranks) {
  BenchTable t{"hash",
               {"pleshard bench hash: " + std::to_string(ranks) +
                " rank(s); us = median time of a batch, max over ranks; rates per second"}};
  for (const auto& r : results) {
    BenchRow row;
    row.key("kernel", r.kernel, "kernel").key("ranks", std::int64_t{ranks}).key("tokens", r.tokens, "tokens");
    row.key("heads", std::int64_t{r.heads}, "heads").value("repeats", std::int64_t{r.repeats}, "repeats");
    row.value("seconds", r.seconds, "us", micros(r.seconds));
    row.value("tokens_per_s", r.tokens_per_second(), "tokens/s", whole(r.tokens_per_second()));
    row.value("ids_per_s", r.ids_per_second(), "ids/s", whole(r.ids_per_second())).value("wrong", r.wrong, "#wrong");
    t.rows.push_back(row);
  }
  return t;
}

BenchTable lookup_table(const std::vector<LookupBenchResult>& results, int ranks, const LookupBenchOptions& o) {
  BenchTable t{"lookup"};
  t.legend.push_back("pleshard bench lookup: " + std::to_string(ranks) + " rank(s), " + std::to_string(o.rows) +
                     "-row tables of " + std::to_string(o.head_dim) + " values, out " + to_string(o.out_dtype) +
                     "; us = median per step, max over ranks; GB/s = (read + written bytes) / s");
  t.legend.push_back(
      "of ceiling = GB/s over the GB/s of the tier's ceiling in the same run: host-memcpy (a memcpy of the rows' "
      "stored bytes on the host lookup's " +
      std::to_string(host_lookup_threads()) +
      " thread(s)) for the host tier, <tier>-plain (the rows' stored bytes gathered, not decoded) for a GPU tier");
  for (const auto& r : results) {
    // The ceiling's row: the same format and ids.
    const auto ceiling = std::find_if(results.begin(), results.end(), [&](const LookupBenchResult& c) {
      return !r.ceiling.empty() && c.tier == r.ceiling && c.format == r.format && c.ids == r.ids;
    });
    const double of_ceiling =
        ceiling == results.end() ? NAN : r.gigabytes_per_second() / ceiling->gigabytes_per_second();
    BenchRow row;
    row.key("tier", r.tier, "tier").key("format", std::string(to_string(r.format)), "format");
    row.key("ranks", std::int64_t{ranks}).key("ids", r.ids, "ids").key("head_dim", std::int64_t{o.head_dim});
    row.key("out_dtype", std::string(to_string(o.out_dtype))).value("seconds", r.seconds, "us", micros(r.seconds));
    row.value("rows_per_s", r.rows_per_second(), "rows/s", whole(r.rows_per_second()));
    row.value("gb_per_s", r.gigabytes_per_second(), "GB/s", fixed(r.gigabytes_per_second(), 3));
    row.value("ceiling", ceiling == results.end() ? BenchValue() : BenchValue(r.ceiling));
    row.value("of_ceiling", or_null(of_ceiling), "of ceiling", percent(of_ceiling)).value("wrong", r.wrong, "#wrong");
    if (r.hidden) row.value("hidden", *r.hidden);
    t.rows.push_back(row);
    if (r.hidden)
      t.remarks.push_back(r.tier + " " + to_string(r.format) + " " + std::to_string(r.ids) + " rows: " +
                          fixed(100 * *r.hidden, 0) + "% of the device lookups' time hidden behind the pinned lookup");
  }
  return t;
}

BenchTable exchange_table(const std::vector<ExchangeBenchResult>& results) {
  BenchTable t{"exchange",
               {"pleshard bench exchange: us = median, max over ranks; busbw per nccl-tests (all_reduce x2(n-1)/n, "
                "others x(n-1)/n)"}};
  for (const auto& r : results) {
    BenchRow row;
    row.key("exchange", r.strategy, "exchange").key("collective", r.collective, "collective");
    row.key("backend", r.backend, "backend").key("ranks", std::int64_t{r.ranks}, "ranks");
    row.key("tokens", r.tokens, "tokens").value("bytes", static_cast<std::int64_t>(std::llround(r.bytes)), "bytes");
    row.value("seconds", r.seconds, "us", micros(r.seconds));
    row.value("algbw", r.algbw(), "algbw GB/s", fixed(r.algbw() * 1e-9, 3));
    row.value("busbw", r.busbw(), "busbw GB/s", fixed(r.busbw() * 1e-9, 3)).value("wrong", r.wrong, "#wrong");
    t.rows.push_back(row);
  }
  return t;
}

BenchTable step_table(const std::vector<StepBenchResult>& results) {
  BenchTable t{"step",
               {"pleshard bench step: whole steps (hash, exchange, fetch, decode of every layer); latency = a step's "
                "time on the engine's stream, max over ranks, in us",
                "tokens = per DP rank and step; tokens/s and rows/s = of all DP ranks together, tokens/s/DP = per DP "
                "rank (tokens/s over dp); B/token = bytes sent per rank and token"}};
  // hit%+rep%: lookups found in the row cache, and repeating a miss of their step (read once).
  for (const auto& r : results) {
    std::string hits = "-";
    if (r.cached) hits = fixed(100 * r.hit_rate, 1) + "+" + fixed(100 * r.repeat_rate, 1);
    BenchRow row;
    row.column("tier", r.tier + (r.cached ? "+c" : ""), k_left).key("tier", r.tier).key("mode", r.mode, "mode");
    row.key("backend", r.backend, "backend").key("exchange", r.exchange, "exchange").key("cached", r.cached);
    row.key("ranks", std::int64_t{r.ranks}, "ranks").key("tp", std::int64_t{r.tp}, "tp");
    row.key("etp", std::int64_t{r.etp}, "etp").value("dp", std::int64_t{r.dp}, "dp");
    row.key("layers", std::int64_t{r.layers}).key("heads", std::int64_t{r.heads}).key("tokens", r.tokens, "tokens");
    row.value("steps", r.steps, "steps").value("p50_us", r.p50 * 1e6, "p50 us", micros(r.p50));
    row.value("p99_us", r.p99 * 1e6, "p99 us", micros(r.p99));
    row.value("layer_p50_us", r.p50 * 1e6 / r.layers, "layer p50 us", micros(r.p50 / r.layers));
    row.value("layer_p99_us", r.p99 * 1e6 / r.layers).value("wall_s", r.wall).value("tokens_done", r.tokens_done);
    row.value("tokens_per_s", r.tokens_per_second(), "tokens/s", whole(r.tokens_per_second()));
    row.value("tokens_per_s_per_dp_rank", r.tokens_per_second_per_dp_rank(), "tokens/s/DP",
              whole(r.tokens_per_second_per_dp_rank()));
    row.value("rows_per_s", r.rows_per_second(), "rows/s", whole(r.rows_per_second()));
    row.value("bytes_per_rank_token", r.bytes_per_token, "B/token", fixed(r.bytes_per_token, 1));
    row.value("exchange_share", r.exchange_share, "xchg%", fixed(100 * r.exchange_share, 1));
    row.value("hit_rate", r.hit_rate).value("repeat_rate", r.repeat_rate).column("hit%+rep%", hits);
    row.value("wrong", r.wrong, "#wrong");
    t.rows.push_back(row);
  }
  return t;
}

BenchTable load_table(const std::vector<LoadBenchResult>& results, int ranks, const LoadBenchOptions& o) {
  BenchTable t{"load"};
  t.legend.push_back("pleshard bench load: " + o.checkpoint.string() + ", " + std::to_string(ranks) + " rank(s), " +
                     (o.cold ? "cold" : "warm") +
                     " page cache; seconds = max over ranks, bytes = all ranks; files = every byte of the files by "
                     "parallel pread");
  const double files_rate = results.empty() ? NAN : results.front().gigabytes_per_second();
  // The share of the host memory's tables on 2 MiB pages (all ranks / the lowest rank), "-"
  // where the tier keeps none there.
  const auto share = [](double s) { return s < 0 ? std::string("-") : fixed(100 * s, 0) + "%"; };
  const auto json_share = [](double s) { return s < 0 ? BenchValue() : BenchValue(s); };
  for (const auto& r : results) {
    const double of_files = r.gigabytes_per_second() / files_rate;
    BenchRow row;
    row.key("what", r.what, "what").key("ranks", std::int64_t{ranks}).key("cold", o.cold);
    row.value("bytes", static_cast<std::int64_t>(std::llround(r.bytes)), "bytes");
    row.value("seconds", r.seconds, "s", fixed(r.seconds, 3));
    row.value("gb_per_s", r.gigabytes_per_second(), "GB/s", fixed(r.gigabytes_per_second(), 3));
    row.value("of_files_rate", or_null(of_files), "of files' rate", percent(of_files));
    row.value("peak_resident_bytes", static_cast<std::int64_t>(std::llround(r.peak_resident)), "peak resident GB",
              fixed(r.peak_resident * 1e-9, 3));
    row.value("wrong", r.wrong, "#wrong");
    row.value("huge_page_share", json_share(r.huge_share), "2 MiB pages",
              share(r.huge_share) + " / " + share(r.huge_share_min));
    row.value("huge_page_share_min", json_share(r.huge_share_min));
    t.rows.push_back(row);
  }
  return t;
}

}  // namespace pleshard
