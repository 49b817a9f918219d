#include "engine/batch_job.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/mpi_check.hpp"
#include "engine/ple_engine.hpp"
#include "io/embedding_output.hpp"

namespace pleshard {

namespace fs = std::filesystem;

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

fs::path parts_dir(const fs::path& out) { return out.string() + ".parts"; }

fs::path part_path(const fs::path& out, std::size_t part) {
  char name[32];
  std::snprintf(name, sizeof name, "part-%06zu.h5", part);
  return parts_dir(out) / name;
}

// Identifies a job's parts: its config, requests, schedule-independent output settings.
std::string job_fingerprint(const ModelConfig& config, const std::vector<Request>& requests,
                            const BatchJobOptions& options, const std::string& checkpoint) {
  std::uint64_t h = kernels::splitmix64(static_cast<std::uint64_t>(options.part_tokens));
  for (char c : to_json(config).dump() + "|" + checkpoint + "|" + to_string(options.dtype))
    h = kernels::splitmix64(h ^ static_cast<unsigned char>(c));
  for (const auto& r : requests) {
    for (char c : r.id) h = kernels::splitmix64(h ^ static_cast<unsigned char>(c));
    for (auto t : r.tokens) h = kernels::splitmix64(h ^ static_cast<std::uint64_t>(t));
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

// Rank 0: parts 0..k-1 already written by an earlier run of the same job.
std::size_t completed_parts(const fs::path& out, const std::string& fingerprint, std::size_t parts) {
  const fs::path dir = parts_dir(out);
  if (!fs::exists(dir)) return 0;
  const fs::path stamp = dir / "job";
  std::string found;
  if (FILE* f = std::fopen(stamp.c_str(), "r")) {
    char buffer[64] = {};
    found.assign(buffer, std::fread(buffer, 1, sizeof buffer - 1, f));
    std::fclose(f);
  }
  if (found != fingerprint)
    throw InputError(dir.string() + ": holds parts of a different job (config, checkpoint, requests, "
                     "--out-dtype or --part-tokens differ); remove it to start afresh");
  std::size_t k = 0;
  while (k < parts && fs::exists(part_path(out, k))) ++k;
  return k;
}

// Per request, per layer: the embeddings of its tokens, filled step by step.
struct RequestOutputs {
  std::vector<std::size_t> requests;                      // global indices, my DP rank's
  std::vector<std::vector<std::vector<std::uint8_t>>> data;  // [request][layer] bytes
};

// Boundaries and ids of consecutive requests, as an output file lists them.
void request_layout(std::span<const Request> requests, std::vector<std::int64_t>& qsl,
                    std::vector<std::string>& ids) {
  qsl.assign(1, 0);
  ids.clear();
  for (const auto& r : requests) {
    qsl.push_back(qsl.back() + static_cast<std::int64_t>(r.tokens.size()));
    ids.push_back(r.id);
  }
}

// Writes one part: with parallel HDF5 every collector (TP rank 0 of each DP rank, over the
// DP communicator) writes its own requests into the shared file; otherwise the part is
// gathered at world rank 0, which writes it alone.
void write_part(const Communicators& comms, bool shared, const fs::path& path, std::span<const Request> part,
                std::size_t first_request, const RequestOutputs& outputs, int layers, std::size_t token_bytes,
                std::int64_t ple_embed_dim, OutDtype dtype) {
  std::vector<std::int64_t> qsl;
  std::vector<std::string> ids;
  request_layout(part, qsl, ids);
  if (shared) {
    EmbeddingWriter writer(path, qsl, ids, layers, ple_embed_dim, dtype, comms.dp());
    for (std::size_t i = 0; i < outputs.requests.size(); ++i)
      for (int d = 0; d < layers; ++d)
        writer.write(d, qsl[outputs.requests[i] - first_request], outputs.data[i][static_cast<std::size_t>(d)]);
    writer.finish();
    return;
  }
  // Gathered: each collector sends (request index, its layers' bytes) records.
  std::vector<std::uint8_t> blob;
  for (std::size_t i = 0; i < outputs.requests.size(); ++i) {
    const auto index = static_cast<std::int64_t>(outputs.requests[i]);
    blob.insert(blob.end(), reinterpret_cast<const std::uint8_t*>(&index),
                reinterpret_cast<const std::uint8_t*>(&index) + sizeof index);
    for (const auto& layer : outputs.data[i]) blob.insert(blob.end(), layer.begin(), layer.end());
  }
  if (blob.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw InputError("a part of over 2 GB on one rank; use a smaller --part-tokens");
  int size = static_cast<int>(blob.size());
  int dp = 1;
  int dp_rank = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_size(comms.dp(), &dp));
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comms.dp(), &dp_rank));
  std::vector<int> sizes(static_cast<std::size_t>(dp)), offsets(static_cast<std::size_t>(dp));
  PLESHARD_MPI_CHECK(MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, comms.dp()));
  std::vector<std::uint8_t> all;
  if (dp_rank == 0) {
    std::size_t total = 0;
    for (int r = 0; r < dp; ++r) {
      offsets[static_cast<std::size_t>(r)] = static_cast<int>(total);
      total += static_cast<std::size_t>(sizes[static_cast<std::size_t>(r)]);
    }
    if (total > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw InputError("a part of over 2 GB; use a smaller --part-tokens");
    all.resize(total);
  }
  PLESHARD_MPI_CHECK(MPI_Gatherv(blob.data(), size, MPI_BYTE, all.data(), sizes.data(), offsets.data(), MPI_BYTE,
                                 0, comms.dp()));
  if (dp_rank != 0) return;
  EmbeddingWriter writer(path, qsl, ids, layers, ple_embed_dim, dtype);
  for (std::size_t at = 0; at < all.size();) {
    std::int64_t index = 0;
    std::memcpy(&index, all.data() + at, sizeof index);
    at += sizeof index;
    const std::size_t local = static_cast<std::size_t>(index) - first_request;
    const std::size_t bytes = part[local].tokens.size() * token_bytes;
    for (int d = 0; d < layers; ++d, at += bytes) writer.write(d, qsl[local], {all.data() + at, bytes});
  }
  writer.finish();
}

// Copies the parts into the output (the collectors share the parts when HDF5 is parallel)
// and removes them.
void assemble_output(const Communicators& comms, bool shared, const fs::path& out,
                     const std::vector<Request>& requests,
                     const std::vector<std::pair<std::size_t, std::size_t>>& parts, int layers,
                     std::int64_t ple_embed_dim, OutDtype dtype) {
  int dp = 1;
  int dp_rank = 0;
  PLESHARD_MPI_CHECK(MPI_Comm_size(comms.dp(), &dp));
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comms.dp(), &dp_rank));
  if (!shared && dp_rank != 0) return;
  std::vector<std::int64_t> qsl;
  std::vector<std::string> ids;
  request_layout(requests, qsl, ids);
  EmbeddingWriter writer(out, qsl, ids, layers, ple_embed_dim, dtype, shared ? comms.dp() : MPI_COMM_SELF);
  const std::size_t stride = shared ? static_cast<std::size_t>(dp) : 1;
  for (std::size_t p = shared ? static_cast<std::size_t>(dp_rank) : 0; p < parts.size(); p += stride) {
    const EmbeddingFile part = read_embeddings_h5(part_path(out, p), layers, dtype);
    for (int d = 0; d < layers; ++d) writer.write(d, qsl[parts[p].first], part.layers[static_cast<std::size_t>(d)]);
  }
  writer.finish();
  if (dp_rank == 0) fs::remove_all(parts_dir(out));
}

}  // namespace

BatchJobReport run_batch_job(const Communicators& comms, const ModelConfig& config,
                             const PleCheckpoint& checkpoint, const std::vector<Request>& requests,
                             const BatchJobOptions& options) {
  const Topology& topo = comms.topology();
  const bool writing = !options.out.empty();
  const bool world_root = topo.rank == 0;
  PleEngine engine(comms, config, checkpoint, options.dtype, options.storage);
  // No step holds more tokens than the budget, nor more requests than tokens.
  if (options.cuda_graph) engine.capture_graph(options.schedule.step_tokens, options.schedule.step_tokens);
  const std::size_t token_bytes = engine.token_bytes();
  const int layers = engine.num_layers();
  const auto parts = split_parts(requests, options.part_tokens);
  const std::int64_t total_tokens = pleshard::total_tokens(requests);

  // Resume: rank 0 looks at the parts directory; everyone learns how many parts to skip.
  std::size_t first_part = 0;
  const std::string fingerprint = job_fingerprint(config, requests, options, checkpoint.path());
  if (writing) {
    first_part = collective_try(comms.world(), [&] {
      std::size_t k = 0;
      if (world_root) {
        k = completed_parts(options.out, fingerprint, parts.size());
        fs::create_directories(parts_dir(options.out));
        for (const auto& entry : fs::directory_iterator(parts_dir(options.out)))
          if (entry.path().extension() == ".partial") fs::remove(entry.path());
        if (FILE* f = std::fopen((parts_dir(options.out) / "job").c_str(), "w")) {
          std::fputs(fingerprint.c_str(), f);
          std::fclose(f);
        }
      }
      return k;
    });
    std::int64_t k = static_cast<std::int64_t>(first_part);
    PLESHARD_MPI_CHECK(MPI_Bcast(&k, 1, MPI_INT64_T, 0, comms.world()));
    first_part = static_cast<std::size_t>(k);
  }
  JobProgress progress;
  progress.requests = static_cast<std::int64_t>(requests.size());
  progress.tokens = total_tokens;
  for (std::size_t p = 0; p < first_part; ++p) {
    progress.requests_done += static_cast<std::int64_t>(parts[p].second - parts[p].first);
    for (std::size_t r = parts[p].first; r < parts[p].second; ++r)
      progress.tokens_done += static_cast<std::int64_t>(requests[r].tokens.size());
  }

  BatchJobReport report;
  report.topology = topo;
  report.storage = engine.tier();
  report.backend = engine.backend();
  report.requests = static_cast<std::int64_t>(requests.size());
  report.tokens = total_tokens;
  report.parts = static_cast<std::int64_t>(parts.size());
  report.parts_resumed = static_cast<std::int64_t>(first_part);
  PLESHARD_MPI_CHECK(MPI_Barrier(comms.world()));
  const double start = MPI_Wtime();
  const bool collector = topo.tp_rank() == 0;  // holds its DP rank's full embeddings
  const bool shared_output = options.parallel_output && EmbeddingWriter::parallel(comms.dp());

  std::vector<ExchangeResult> results;
  for (std::size_t p = first_part; p < parts.size(); ++p) {
    const std::span<const Request> part(requests.data() + parts[p].first, parts[p].second - parts[p].first);
    const std::vector<int> owner = assign_requests_by_tokens(part, topo.dp());
    RequestOutputs outputs;
    std::vector<Request> mine;
    for (std::size_t r = 0; r < part.size(); ++r) {
      if (owner[r] != topo.dp_rank()) continue;
      mine.push_back(part[r]);
      outputs.requests.push_back(parts[p].first + r);
      outputs.data.emplace_back(static_cast<std::size_t>(layers),
                                std::vector<std::uint8_t>(writing && collector ? part[r].tokens.size() * token_bytes : 0));
    }
    StepScheduler scheduler(mine, config.ngram_size, config.eos_token_id, options.schedule);
    TokenBatch batch(config.ngram_size);
    std::vector<StepSlice> slices;
    while (true) {
      const bool has_work = scheduler.next_step(batch, slices);
      // Every rank steps until no rank has work: ETP groups run their collectives together.
      // TP ranks share a DP rank's tokens and requests, so count them once.
      std::int64_t finished = 0;
      for (const StepSlice& slice : slices)
        finished += slice.position + slice.length == static_cast<std::int64_t>(mine[static_cast<std::size_t>(slice.request)].tokens.size());
      const bool counter = topo.tp_rank() == 0;
      std::int64_t state[3] = {has_work ? 1 : 0, counter ? batch.num_tokens() : 0, counter ? finished : 0};
      PLESHARD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, state, 3, MPI_INT64_T, MPI_SUM, comms.world()));
      if (state[0] == 0) break;
      ++report.steps;
      engine.forward(batch, results);
      progress.tokens_done += state[1];
      progress.requests_done += state[2];

      if (writing) {
        const double t0 = MPI_Wtime();
        for (int d = 0; d < layers; ++d) {
          ExchangeResult& result = results[static_cast<std::size_t>(d)];
          std::vector<std::uint8_t> full;
          if (topo.sequence_parallel() && topo.tp > 1) {
            // Gather the TP ranks' token slices at TP rank 0.
            std::vector<int> counts(static_cast<std::size_t>(topo.tp)), offsets(static_cast<std::size_t>(topo.tp));
            for (int t = 0; t < topo.tp; ++t) {
              const RowRange s = sequence_slice(batch.num_tokens(), topo.tp, t);
              counts[static_cast<std::size_t>(t)] = static_cast<int>(static_cast<std::size_t>(s.size()) * token_bytes);
              offsets[static_cast<std::size_t>(t)] = static_cast<int>(static_cast<std::size_t>(s.begin) * token_bytes);
            }
            if (collector) full.resize(static_cast<std::size_t>(batch.num_tokens()) * token_bytes);
            PLESHARD_MPI_CHECK(MPI_Gatherv(result.embeddings.data(), static_cast<int>(result.embeddings.size()),
                                           MPI_BYTE, full.data(), counts.data(), offsets.data(), MPI_BYTE, 0,
                                           comms.tp()));
          } else if (collector) {
            full = std::move(result.embeddings);
          }
          if (!collector) continue;
          std::size_t row = 0;
          for (const StepSlice& slice : slices) {
            auto& target = outputs.data[static_cast<std::size_t>(slice.request)][static_cast<std::size_t>(d)];
            std::memcpy(target.data() + static_cast<std::size_t>(slice.position) * token_bytes,
                        full.data() + row * token_bytes, static_cast<std::size_t>(slice.length) * token_bytes);
            row += static_cast<std::size_t>(slice.length);
          }
        }
        report.times.write += MPI_Wtime() - t0;
      }
      if (world_root && options.progress) {
        progress.seconds = MPI_Wtime() - start;
        options.progress(progress);
      }
    }

    if (!writing) continue;
    const double t0 = MPI_Wtime();
    if (collector) {
      write_part(comms, shared_output, part_path(options.out, p), part, parts[p].first, outputs, layers, token_bytes,
                 config.ple_embed_dim, options.dtype);
      if (world_root) {
        if (const char* kill_after = std::getenv("PLESHARD_FAULT_KILL_AFTER_PARTS");
            kill_after != nullptr && static_cast<std::size_t>(std::atoll(kill_after)) == p + 1) {
          std::fprintf(stderr, "pleshard: fault injection: killed after part %zu\n", p + 1);
          std::raise(SIGKILL);
        }
      }
    }
    report.times.write += MPI_Wtime() - t0;
  }

  // Assemble the parts into the output.
  if (writing && collector) {
    const double t0 = MPI_Wtime();
    assemble_output(comms, shared_output, options.out, requests, parts, layers, config.ple_embed_dim, options.dtype);
    report.times.write += MPI_Wtime() - t0;
  }
  report.seconds = MPI_Wtime() - start;

  // Phase times: the slowest rank; collectives: rank 0's own calls.
  const PhaseTimes& t = engine.times();
  double phases[7] = {t.hash, t.exchange, t.lookup, report.times.write, t.collect, t.graph, report.seconds};
  PLESHARD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, phases, 7, MPI_DOUBLE, MPI_MAX, comms.world()));
  report.times = {phases[0], phases[1], phases[2], phases[3], phases[4], phases[5]};
  report.seconds = phases[6];
  report.rows = total_tokens * config.total_heads() * config.num_ple_layers();
  const char* group_names[] = {"etp", "etp_dp", "tp"};
  const auto comm_list = engine.communicators();
  for (std::size_t c = 0; c < comm_list.size(); ++c)
    for (const auto& [kind, counter] : comm_list[c]->counters())
      report.collectives.push_back({std::string(group_names[c]) + " " + kind, comm_list[c]->size(),
                                    counter.calls, counter.bytes, counter.seconds});
  return report;
}

}  // namespace pleshard
