#include "job/batch_job.hpp"

#include <algorithm>
#include <filesystem>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "core/collective.hpp"
#include "core/digest.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "core/option_names.hpp"
#include "core/rank_reduction.hpp"
#include "core/same_on_every_rank.hpp"
#include "core/watched_collectives.hpp"
#include "core/watched_wait.hpp"
#include "exec/space_event.hpp"
#include "job/job_output.hpp"
#include "job/job_steps.hpp"
#include "job/output_description.hpp"

namespace pleshard {

double CollectiveReport::busbw() const {
  const std::string kind = name.substr(name.find(' ') + 1);
  return algbw() * bus_factor(kind, ranks);
}

std::vector<std::pair<std::size_t, std::size_t>> split_parts(const std::vector<Request>& requests,
                                                             std::int64_t part_tokens) {
  std::vector<std::pair<std::size_t, std::size_t>> parts;
  std::size_t first = 0;
  std::int64_t tokens = 0;
  for (std::size_t r = 0; r < requests.size(); ++r) {
    tokens += static_cast<std::int64_t>(requests[r].tokens.size());
    if (tokens >= part_tokens) {
      parts.emplace_back(first, r + 1);
      first = r + 1;
      tokens = 0;
    }
  }
  if (first < requests.size()) parts.emplace_back(first, requests.size());
  return parts;
}

namespace {

// Identifies a job's output by what decides its bytes: the config and its token map, the
// checkpoint's content (not its path: the same job under another spelling resumes, a
// replaced checkpoint does not), the requests and the layout-independent output settings.
std::string job_fingerprint(const ModelConfig& config, const std::vector<Request>& requests,
                            const BatchJobOptions& options, std::uint64_t checkpoint_identity) {
  Digest digest(static_cast<std::uint64_t>(options.part_tokens));
  digest.add(to_json(config).dump()).add(token_map_sha256(config));
  digest.add(checkpoint_identity).add(std::string_view(to_string(options.dtype)));
  add_requests(digest, requests);
  return identity_hex(digest.value());
}

// A step whose embeddings are on their way to the host.
struct PendingStep {
  std::vector<EmbeddingView> views;
  std::vector<StepSlice> slices;
  std::vector<std::int64_t> slice_rows;  // the output row of each slice's first token
};

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  const auto at = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(at), values.end());
  return values[at];
}

// `out` as a path from the root, its . and .. resolved ("" stays "": no output).
std::filesystem::path out_file(const std::filesystem::path& out) {
  if (out.empty()) return out;
  std::error_code error;
  const std::filesystem::path resolved = std::filesystem::weakly_canonical(std::filesystem::absolute(out), error);
  return error ? std::filesystem::absolute(out) : resolved;
}

// What decides the job's steps and output — the requests, their schedule, the parts, the
// output file — the same on every rank (core/same_on_every_rank.hpp), checked before the
// engine's first collective: ranks that step through other schedules would cross their
// collectives and wait out the collective timeout.
void require_same_job(MPI_Comm world, const std::vector<Request>& requests, const BatchJobOptions& options) {
  Digest digest;
  add_requests(digest, requests);
  require_same_on_every_rank(world,
                             {{"the number of requests", static_cast<std::int64_t>(requests.size())},
                              {"the requests' ids and tokens", static_cast<std::int64_t>(digest.value()), false},
                              {setting_name("decode_tokens", Option::decode_tokens), options.schedule.decode_tokens},
                              {setting_name("part_tokens", Option::part_tokens), options.part_tokens},
                              // The file itself, however spelled (out/x.h5, ./out/x.h5), from each rank's directory.
                              {"the output file (--out)",
                               static_cast<std::int64_t>(Digest().add(out_file(options.out).string()).value()), false},
                              {"overwrite (--overwrite)", options.overwrite ? 1 : 0}},
                             "the job");
}

}  // namespace

EngineOptions engine_options(const BatchJobOptions& options) {
  EngineOptions engine;
  engine.dtype = options.dtype;
  engine.tier = options.storage;
  engine.placement = options.placement;
  engine.auto_placement = options.auto_placement;
  engine.log_start = static_cast<bool>(options.progress);  // a quiet job logs none of it
  engine.gpu_memory_limit = options.gpu_memory_limit;
  engine.share_tables = options.share_tables;
  engine.max_tokens = options.schedule.step_tokens;
  engine.cuda_graphs = options.cuda_graph;
  engine.fetch_ahead = options.fetch_ahead;
  engine.exchange = options.exchange;
  engine.collective_timeout_s = options.collective_timeout_s;
  engine.owner_gpu_plan_from = options.owner_gpu_plan_from;
  engine.owner_fixed_below = options.owner_fixed_below;
  engine.cache = options.cache;
  engine.disk_reads = options.disk_reads;
  engine.host_reads = options.host_reads;
  return engine;
}

void add_engine_report(BatchJobReport& report, const PleEngine& engine) {
  const EngineStats& stats = engine.stats();
  report.topology = engine.topology();
  report.placement = engine.placement();
  report.placement_report = engine.placement_report();
  report.backend = engine.backend();
  report.backend_note = engine.backend_note();
  report.exchange = engine.exchange();
  report.threads = engine.threads();
  report.times = stats.times;
  report.graphs_captured = stats.graphs_captured;
  report.steps_fetched_ahead = stats.steps_fetched_ahead;
  report.started_steps = stats.started_steps;
  report.tables_ready_early = stats.tables_ready_early;
  const RowStore::HostReadCounts reads = engine.host_reads();
  report.host_reads_gathered = reads.gathered;
  report.host_reads_uva = reads.uva;
  report.host_gather_rows_by_host = reads.rows_by_host;
  report.host_gather_rows_by_gpu = reads.rows_by_gpu;
  report.step_p50 = percentile(stats.step_seconds, 0.5);
  report.step_p99 = percentile(stats.step_seconds, 0.99);
  report.load_seconds = stats.load.seconds;
  report.load_bytes = static_cast<double>(stats.load.bytes);
  report.load_peak_resident = static_cast<double>(stats.load.peak_resident);
  report.shared_ranks = stats.load.shared_ranks;
  report.cache_fill_seconds = stats.load.cache_fill_seconds;
  report.host_pages = stats.load.host_pages;
  report.huge_page_offer = stats.load.huge_page_offer;
  report.numa_placement = stats.load.numa_placement;
  report.traffic = engine.traffic();
  report.cache = engine.cache();
}

void reduce_report(BatchJobReport& report, const PleEngine& engine, MPI_Comm world) {
  // Phase times and the job's time: the slowest rank; sizes: all ranks; collectives and
  // step latencies: rank 0's own (the tables' pages were agreed by the engine).
  RankReduction reduction;
  for (double& phase : report.times.phase) reduction.max(phase);
  reduction.max(report.times.steps).max(report.times.graph).max(report.seconds).max(report.write_seconds);
  reduction.max(report.steps)
      .max(report.steps_fetched_ahead)
      .max(report.started_steps)
      .max(report.tables_ready_early)
      .max(report.load_seconds)
      .max(report.load_peak_resident)
      .max(report.cache_fill_seconds);
  reduction.max(report.shared_ranks);
  reduction.sum(report.host_copy_bytes).sum(report.bytes_written).sum(report.load_bytes);
  reduction.sum(report.host_reads_gathered).sum(report.host_reads_uva);
  reduction.sum(report.host_gather_rows_by_host).sum(report.host_gather_rows_by_gpu);
  ExchangeTraffic& t = report.traffic;
  reduction.sum(t.steps).sum(t.tokens).sum(t.bytes_sent).sum(t.ids).sum(t.ids_sent).sum(t.rows_sent);
  reduction.sum(t.bytes_between_nodes).sum(t.rows_from_peers).sum(t.bytes_from_peers);
  for (CacheReport& c : report.cache)
    reduction.sum(c.static_rows).sum(c.dynamic_rows).sum(c.hits).sum(c.misses).sum(c.repeats);
  reduction.run(world);
  for (const auto& [group, comm] : engine.communicators())
    for (const auto& [kind, counter] : comm->counters())
      report.collectives.push_back({group + " " + kind, comm->size(), counter.calls, counter.bytes, counter.seconds});
}

BatchJobReport run_batch_job(const Communicators& comms, const ModelConfig& config, const PleCheckpoint& checkpoint,
                             const std::vector<Request>& requests, const BatchJobOptions& options) {
  const Topology& topo = comms.topology();
  const bool world_root = topo.rank == 0;
  require_same_job(comms.world(), requests, options);
  WaitContext phase("placing and loading the tables");
  PleEngine engine(comms, config, checkpoint, engine_options(options));
  phase.enter("opening the output");
  reach_fault_point(FaultPoint::output);
  StepSpace& space = engine.space();
  const std::size_t token_bytes = engine.token_bytes();
  const int layers = engine.num_layers();
  const auto parts = split_parts(requests, options.part_tokens);
  const std::int64_t total_tokens = pleshard::total_tokens(requests);

  // TP ranks of a DP rank hold the same rows, but each its own slice under sequence
  // parallelism: those rows are written by the rank that holds them.
  const bool split_rows = topo.sequence_parallel() && topo.tp > 1;
  const bool writer = !options.out.empty() && (split_rows || topo.tp_rank() == 0);
  std::unique_ptr<JobOutput> output;
  if (!options.out.empty()) {
    std::vector<std::int64_t> qsl{0};
    std::vector<std::string> ids;
    for (const auto& r : requests) {
      qsl.push_back(qsl.back() + static_cast<std::int64_t>(r.tokens.size()));
      ids.push_back(r.id);
    }
    // Read from every rank's files: a file that fails a rank's read fails the job on all.
    const std::uint64_t identity = collective_try(comms.world(), [&] { return checkpoint.content_identity(); });
    const OutputSource source{"pleshard run", identity, options.requests_source, options.requests_sha256,
                              options.part_tokens};
    const EmbeddingFileSpec spec{
        qsl, ids, layers, config.ple_embed_dim, options.dtype, {}, describe_output(config, options.dtype, source)};
    JobOutputOptions out_options{.out = options.out,
                                 .fingerprint = job_fingerprint(config, requests, options, identity),
                                 .overwrite = options.overwrite,
                                 .inputs = options.inputs,
                                 .part_rows = {},
                                 .checkpoint_state = checkpoint.file_state(),
                                 .checkpoint_name = checkpoint.path()};
    for (const std::string& file : checkpoint.files()) out_options.inputs.emplace_back(file);
    for (const auto& part : parts) out_options.part_rows.push_back(qsl[part.first]);
    out_options.part_rows.push_back(qsl.back());
    output = std::make_unique<JobOutput>(comms, out_options, spec, writer);
  }
  // A complete output of this very job: nothing to do.
  const std::size_t first_part = output && output->complete() ? parts.size() : output ? output->parts_done() : 0;
  std::vector<std::int64_t> qsl{0};
  for (const auto& r : requests) qsl.push_back(qsl.back() + static_cast<std::int64_t>(r.tokens.size()));

  JobProgress progress;
  progress.requests = static_cast<std::int64_t>(requests.size());
  progress.tokens = total_tokens;
  for (std::size_t p = 0; p < first_part; ++p) {
    progress.requests_done += static_cast<std::int64_t>(parts[p].second - parts[p].first);
    progress.tokens_done += qsl[parts[p].second] - qsl[parts[p].first];
  }
  progress.tokens_resumed = progress.tokens_done;

  BatchJobReport report;
  report.cuda_graph = options.cuda_graph;
  if (engine.placement().uses(StorageTier::pinned)) report.host_reads = to_string(options.host_reads);
  report.output = options.out.string();
  report.model_family = to_string(config.family);
  report.token_map = describe_token_map(config);
  report.requests = static_cast<std::int64_t>(requests.size());
  report.tokens = total_tokens;
  report.tokens_resumed = progress.tokens_resumed;
  report.rows_per_token = static_cast<std::int64_t>(config.total_heads()) * config.num_ple_layers();
  report.parts = static_cast<std::int64_t>(parts.size());
  report.parts_resumed = static_cast<std::int64_t>(first_part);
  report.already_complete = output && output->complete();

  // On a GPU, two steps' embeddings in pinned host buffers: one being copied while the
  // rows of the other are written. On the host, a step's rows are written from where the
  // step left them, before the next step reuses that memory.
  const bool copying = writer && space.on_device();
  const std::size_t layer_bytes = static_cast<std::size_t>(options.schedule.step_tokens) * token_bytes;
  std::unique_ptr<HostBuffer> host[2];
  std::unique_ptr<SpaceEvent> copied[2];
  if (copying)
    for (int i = 0; i < 2; ++i) {
      host[i] = std::make_unique<HostBuffer>(space, static_cast<std::size_t>(layers) * layer_bytes);
      copied[i] = std::make_unique<SpaceEvent>(space);
    }
  PendingStep pending[2];
  // Writes step j's rows where they go in the output file (once their copy is done).
  const auto write_step = [&](std::size_t j) {
    const PendingStep& step = pending[j % 2];
    if (copying) engine.wait_until(*copied[j % 2]);
    std::int64_t at = 0;  // the slice's first token in the step
    for (std::size_t s = 0; s < step.slices.size(); ++s) {
      const StepSlice& slice = step.slices[s];
      for (int d = 0; d < layers; ++d) {
        const EmbeddingView& v = step.views[static_cast<std::size_t>(d)];
        const std::int64_t begin = std::max(at, v.first);
        const std::int64_t end = std::min(at + slice.length, v.first + v.rows);
        if (begin >= end) continue;
        const auto* rows = copying ? host[j % 2]->data() + static_cast<std::size_t>(d) * layer_bytes
                                   : static_cast<const std::uint8_t*>(v.data);
        output->write(d, step.slice_rows[s] + (begin - at),
                      {rows + static_cast<std::size_t>(begin - v.first) * token_bytes,
                       static_cast<std::size_t>(end - begin) * token_bytes});
      }
      at += slice.length;
    }
  };
  // Writes the steps before `end` not written yet.
  std::size_t written = 0;
  const auto write_steps = [&](std::size_t end) {
    for (; written < end; ++written) write_step(written);
  };
  // Parts [parts_done, end) are complete once every step before is written: each writer
  // syncs and rank 0 records them (parts without steps included).
  std::size_t parts_done = first_part;
  const auto finish_parts = [&](std::size_t end) {
    if (parts_done == end) return false;
    engine.wait();
    for (; parts_done < end; ++parts_done)
      if (output) output->finish_part(parts_done + 1);
    // The parts' whole work, other ETP groups' steps past my group's included.
    progress.tokens_done = qsl[parts[end - 1].second];
    progress.requests_done = static_cast<std::int64_t>(parts[end - 1].second);
    return true;
  };

  phase.enter("the steps");
  watched_barrier(comms.world(), "every rank's start of the steps");
  const double start = MPI_Wtime();
  const auto report_progress = [&] {
    if (!world_root || !options.progress) return;
    progress.seconds = MPI_Wtime() - start;
    options.progress(progress);
  };
  // Each step is scheduled one ahead, so that the engine knows its successor (NextStep),
  // across parts too.
  JobSteps steps(requests, parts, first_part, qsl, topo.dp(), topo.dp_rank(), topo.etp_group(), topo.edp(), config,
                 options.schedule);
  std::optional<JobStep> step = steps.next();
  for (std::size_t k = 0; step; ++k) {
    std::optional<JobStep> next = steps.next();
    const NextStep ahead = next && options.fetch_ahead ? NextStep{&next->batch, next->group_tokens} : NextStep{};
    const StepOutput out = engine.forward(step->batch, step->group_tokens, ahead);
    ++report.steps;
    if (writer) pending[k % 2] = {out.layers, std::move(step->slices), std::move(step->slice_rows)};
    if (copying) {
      for (int d = 0; d < layers; ++d) {
        const EmbeddingView& v = out.layers[static_cast<std::size_t>(d)];
        space.copy_to_host_async(host[k % 2]->data() + static_cast<std::size_t>(d) * layer_bytes, v.data, v.bytes());
        report.host_copy_bytes += static_cast<double>(v.bytes());
      }
      copied[k % 2]->record();
      // The previous step's rows are written while this one runs.
      write_steps(k);
    } else if (writer) {
      write_steps(k + 1);
    }
    progress.tokens_done += step->tokens_done;
    progress.requests_done += step->requests_done;
    // The part's last step: its rows written, the part recorded.
    const std::size_t part_end = next ? next->part : parts.size();
    if (part_end != step->part) {
      if (writer) write_steps(k + 1);
      finish_parts(part_end);
    }
    report_progress();
    step = std::move(next);
  }
  if (finish_parts(parts.size())) report_progress();
  engine.wait();
  phase.enter("committing the output");
  if (output && !output->complete()) output->commit();
  report.seconds = MPI_Wtime() - start;
  phase.enter("the report");

  report.write_seconds = output ? output->write_seconds() : 0;
  report.bytes_written = output ? static_cast<double>(output->bytes_written()) : 0;
  add_engine_report(report, engine);
  reduce_report(report, engine, comms.world());
  return report;
}

}  // namespace pleshard
