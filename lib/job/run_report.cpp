#include "job/run_report.hpp"

#include <cmath>
#include <string>

#include "core/version.hpp"

namespace pleshard {

namespace {

ReportField::Value count(double value) { return static_cast<std::int64_t>(std::llround(value)); }
ReportField::Value count(std::int64_t value) { return value; }
ReportField::Value real(double value) { return value; }
// A value that exists only when `applies`.
ReportField::Value real_if(bool applies, double value) {
  return applies ? ReportField::Value(value) : ReportField::Value(nullptr);
}
ReportField::Value text_or_null(const std::string& value) {
  return value.empty() ? ReportField::Value(nullptr) : ReportField::Value(value);
}

const char* outcome(const BatchJobReport& r) {
  if (r.already_complete) return "nothing_to_do";
  return r.parts_resumed > 0 ? "resumed" : "ran";
}

std::string outcome_text(const BatchJobReport& r) {
  if (r.already_complete) return "complete, nothing to do (the output holds this job's rows already)";
  if (r.parts_resumed > 0)
    return "resumed: " + std::to_string(r.parts_resumed) + " of " + std::to_string(r.parts) +
           " parts kept from an earlier run, the rest done in this run";
  return "ran: every part done in this run";
}

std::vector<ReportRecord> cache_records(const BatchJobReport& r) {
  std::vector<ReportRecord> records;
  for (std::size_t d = 0; d < r.cache.size(); ++d) {
    const CacheReport& c = r.cache[d];
    records.push_back({{"", "ple_index", "layer", count(static_cast<std::int64_t>(d)), ""},
                       {"", "static_rows", "static rows", count(c.static_rows), ""},
                       {"", "dynamic_rows", "dynamic rows", count(c.dynamic_rows), ""},
                       {"", "lookups", "lookups", count(c.hits + c.misses + c.repeats), ""},
                       {"", "hits", "hits", count(c.hits), ""},
                       {"", "repeats", "repeats of a miss in its step", count(c.repeats), ""},
                       {"", "rows_read", "rows read from the tier", count(c.misses), ""}});
  }
  return records;
}

std::vector<ReportRecord> placement_records(const BatchJobReport& r) {
  std::vector<ReportRecord> records;
  for (std::size_t d = 0; d < r.placement_report.lines.size(); ++d)
    records.push_back({{"", "ple_index", "table", count(static_cast<std::int64_t>(d)), ""},
                       {"", "tier", "tier", std::string(to_string(r.placement.tier(static_cast<int>(d)))), ""},
                       {"", "plan", "why", r.placement_report.lines[d], ""}});
  return records;
}

std::vector<ReportRecord> host_page_records(const BatchJobReport& r) {
  std::vector<ReportRecord> records;
  for (const HostTablePages& t : r.host_pages)
    records.push_back(
        {{"", "ple_index", "table", count(std::int64_t{t.ple_index}), ""},
         {"", "tier", "tier", std::string(to_string(t.tier)), ""},
         {"", "shared", "node's copy", t.shared, ""},
         {"", "pages", "pages asked", t.ask, ""},
         {"", "bytes", "bytes, all ranks", count(static_cast<std::int64_t>(t.bytes)), ""},
         {"", "huge_page_share", "on 2 MiB pages", real(t.huge_share()), ""},
         {"", "huge_page_share_min", "lowest rank", real(t.huge_share_min), ""},
         {"", "ranks_without_huge_pages", "ranks with none", count(std::int64_t{t.ranks_without_huge}), ""},
         {"", "numa_node", "NUMA node, rank 0",
          t.numa_node >= 0 ? ReportField::Value(std::int64_t{t.numa_node}) : ReportField::Value(nullptr), ""},
         {"", "numa_home_share_min", "on the GPU's node, lowest rank", real_if(t.home_share_min >= 0, t.home_share_min),
          ""}});
  return records;
}

std::vector<ReportRecord> collective_records(const BatchJobReport& r) {
  std::vector<ReportRecord> records;
  for (const CollectiveReport& c : r.collectives)
    records.push_back({{"", "name", "collective", c.name, ""},
                       {"", "ranks", "ranks", count(static_cast<std::int64_t>(c.ranks)), ""},
                       {"", "calls", "calls", count(c.calls), ""},
                       {"", "bytes", "bytes", count(c.bytes), ""},
                       {"", "time_s", "time (s)", real(c.seconds), ""},
                       {"", "algbw_gb_s", "algbw (GB/s)", real(c.algbw() * 1e-9), ""},
                       {"", "busbw_gb_s", "busbw (GB/s)", real(c.busbw() * 1e-9), ""}});
  return records;
}

}  // namespace

std::vector<ReportField> run_report_fields(const BatchJobReport& r) {
  const bool worked = r.tokens_done() > 0 && r.seconds > 0;
  const bool stepped = r.steps > 0;
  const auto gathered_rows = static_cast<double>(r.host_gather_rows_by_host + r.host_gather_rows_by_gpu);
  const auto per_token = [&](double bytes) {
    return r.traffic.tokens > 0 ? bytes / static_cast<double>(r.traffic.tokens) : 0.0;
  };
  const auto rate = [](double bytes, double seconds) { return seconds > 0 ? bytes / seconds * 1e-9 : 0.0; };
  std::vector<ReportField> f = {
      {"job", "schema_version", "report schema version", count(std::int64_t{k_run_report_schema_version}), ""},
      {"job", "pleshard_version", "pleshard version", version_string(), ""},
      {"job", "job", "job", r.job, ""},
      {"job", "outcome", "outcome", std::string(outcome(r)), outcome_text(r)},
      {"job", "output", "output", text_or_null(r.output), r.output.empty() ? "- (summary only)" : ""},
      {"job", "model_family", "model family", text_or_null(r.model_family), ""},
      {"job", "token_map", "token map", text_or_null(r.token_map),
       r.token_map.empty() ? "- (the family hashes through none)" : ""},
      {"layout", "ranks", "ranks", count(std::int64_t{r.topology.world}), ""},
      {"layout", "dp", "DP ranks", count(std::int64_t{r.topology.dp()}), ""},
      {"layout", "tp", "TP ranks", count(std::int64_t{r.topology.tp}), ""},
      {"layout", "etp", "ETP group, ranks that split every table's rows", count(std::int64_t{r.topology.etp}),
       r.topology.describe_etp()},
      {"layout", "storage", "storage tier (mixed: per table, see placement)", text_or_null(r.placement.storage()), ""},
      {"layout", "placement", "each table's tier", text_or_null(r.placement.describe()), ""},
      {"layout", "placement_auto", "placed automatically", r.placement_report.automatic, ""},
      {"layout", "placement_plan", "automatic placement, per table", placement_records(r), ""},
      {"layout", "cache_auto_bytes", "row cache the automatic placement sized, per rank (bytes)",
       count(static_cast<std::int64_t>(r.placement_report.cache_bytes)), ""},
      {"layout", "exchange", "exchange strategy", r.exchange, ""},
      {"layout", "backend", "collectives over", r.backend, ""},
      {"layout", "backend_note", "note on the collectives", text_or_null(r.backend_note), ""},
      {"layout", "cuda_graph", "CUDA graphs", r.cuda_graph, ""},
      {"layout", "threads", "host threads a rank, rank 0", count(static_cast<std::int64_t>(r.threads.count)), ""},
      {"layout", "threads_from", "where rank 0's thread count came from", std::string(to_string(r.threads.source)),
       std::string(to_string(r.threads.source)) + " (" + r.threads.how + ")"},
      {"work", "requests", "requests of the job", count(r.requests), ""},
      {"work", "tokens", "tokens of the job", count(r.tokens), ""},
      {"work", "tokens_done", "tokens done in this run", count(r.tokens_done()), ""},
      {"work", "tokens_resumed", "tokens resumed (done by an earlier run)", count(r.tokens_resumed), ""},
      {"work", "rows_done", "embedding rows done in this run", count(r.rows_done()), ""},
      {"work", "parts", "output parts", count(r.parts), ""},
      {"work", "parts_resumed", "parts resumed", count(r.parts_resumed), ""},
      {"work", "steps", "steps (max over ranks)", count(r.steps), ""},
      {"time", "wall_s", "wall time of this run's work (s)", real(r.seconds), ""},
      {"time", "tokens_per_s", "throughput (tokens/s)", real_if(worked, r.tokens_per_s()), ""},
      {"time", "rows_per_s", "throughput (rows/s)",
       real_if(worked, worked ? static_cast<double>(r.rows_done()) / r.seconds : 0), ""},
      {"time", "step_p50_us", "step latency p50, rank 0 (us)", real_if(stepped, r.step_p50 * 1e6), ""},
      {"time", "step_p99_us", "step latency p99, rank 0 (us)", real_if(stepped, r.step_p99 * 1e6), ""},
      {"time", "steps_s", "time in steps, max over ranks (s)", real(r.times.steps), ""},
      {"time", "graph_replay_s", "of which CUDA graph replays (s)", real(r.times.graph), ""},
      {"time", "graphs_captured", "CUDA graphs captured", count(r.graphs_captured), ""},
      {"time", "steps_fetched_ahead", "steps fetched beside the step before's decode (max over ranks)",
       count(r.steps_fetched_ahead), ""},
      {"time", "started_steps", "steps started and their tables waited for one at a time (max over ranks)",
       count(r.started_steps), ""},
      {"time", "tables_ready_early", "tables of started steps signalled as their tier's were decoded (max over ranks)",
       count(r.tables_ready_early), ""},
      {"time", "host_reads", "pinned rows read by (--host-reads)", text_or_null(r.host_reads), ""},
      {"time", "host_reads_gathered", "pinned lookups gathered by the host (tables x steps, all ranks)",
       count(r.host_reads_gathered), ""},
      {"time", "host_reads_uva", "pinned lookups read through UVA (tables x steps, all ranks)", count(r.host_reads_uva),
       ""},
      {"time", "host_gather_share", "share of gathered pinned rows copied by the host (the GPU read the rest)",
       real_if(gathered_rows > 0, static_cast<double>(r.host_gather_rows_by_host) / std::max<double>(1, gathered_rows)),
       ""},
  };
  for (int p = 0; p < k_step_phases; ++p) {
    const std::string phase = to_string(static_cast<StepPhase>(p));
    f.push_back({"time", "phase_" + phase + "_s", "phase " + phase + ", max over ranks (s)",
                 real(r.times.phase[static_cast<std::size_t>(p)]), ""});
  }
  const std::vector<ReportField> rest = {
      {"time", "exchange_share", "share of the steps' time in the exchange", real(r.exchange_share()), ""},
      {"tables", "table_load_s", "table load, slowest rank (s)", real(r.load_seconds), ""},
      {"tables", "table_load_bytes", "table bytes loaded, all ranks", count(r.load_bytes), ""},
      {"tables", "table_load_gb_s", "table load rate, all ranks (GB/s)", real(rate(r.load_bytes, r.load_seconds)), ""},
      {"tables", "table_load_peak_resident_bytes", "peak resident memory after the load, largest rank (bytes)",
       count(r.load_peak_resident), ""},
      {"tables", "table_shared_ranks",
       "ranks of a node sharing one copy of rows (host and pinned tiers; every tier under peer reads), most",
       count(r.shared_ranks), ""},
      {"tables", "cache_fill_s", "row cache's static part filled, slowest rank (s)", real(r.cache_fill_seconds), ""},
      {"tables", "huge_page_offer", "2 MiB pages the machine offers, rank 0", text_or_null(r.huge_page_offer), ""},
      {"tables", "numa_placement", "where the tables' pages go, rank 0", text_or_null(r.numa_placement), ""},
      {"tables", "host_pages", "pages behind the tables in host memory, all ranks", host_page_records(r), ""},
      {"output", "host_copy_bytes", "embeddings copied to the host (bytes)", count(r.host_copy_bytes), ""},
      {"output", "bytes_written", "embeddings written (bytes)", count(r.bytes_written), ""},
      {"output", "write_s", "writes and syncs, slowest writer (s)", real(r.write_seconds), ""},
      {"output", "write_gb_s", "write rate, all writers (GB/s)", real(rate(r.bytes_written, r.write_seconds)), ""},
      {"exchange", "exchange_bytes_sent", "bytes sent, all ranks", count(r.traffic.bytes_sent), ""},
      {"exchange", "exchange_bytes_per_rank_token", "bytes sent per rank per token", real(r.bytes_per_token()), ""},
      {"exchange", "exchange_bytes_between_nodes", "bytes sent between nodes, all ranks",
       count(r.traffic.bytes_between_nodes), ""},
      {"exchange", "exchange_bytes_between_nodes_per_rank_token", "bytes sent between nodes per rank per token",
       real(per_token(r.traffic.bytes_between_nodes)), ""},
      {"exchange", "exchange_ids", "ids looked up", count(r.traffic.ids), ""},
      {"exchange", "exchange_ids_sent", "ids sent to their owners (deduplicated)", count(r.traffic.ids_sent), ""},
      {"exchange", "exchange_rows_sent", "rows sent", count(r.traffic.rows_sent), ""},
      {"exchange", "exchange_rows_from_peers", "rows read in place from other ranks' parts (peer reads)",
       count(r.traffic.rows_from_peers), ""},
      {"exchange", "exchange_bytes_from_peers", "their stored bytes",
       count(static_cast<std::int64_t>(r.traffic.bytes_from_peers)), ""},
      {"cache", "cache", "row cache per layer, all ranks", cache_records(r), ""},
      {"collectives", "collectives", "collectives, rank 0", collective_records(r), ""},
  };
  f.insert(f.end(), rest.begin(), rest.end());
  return f;
}

}  // namespace pleshard
