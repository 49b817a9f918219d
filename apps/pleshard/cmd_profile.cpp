// pleshard profile --checkpoint CKPT --requests CORPUS --out PROFILE.h5

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "ckpt/named_checkpoint.hpp"
#include "ckpt/same_model.hpp"
#include "cli.hpp"
#include "core/collective.hpp"
#include "core/digest.hpp"
#include "core/error.hpp"
#include "core/same_on_every_rank.hpp"
#include "engine_option_cli.hpp"
#include "io/durable_file.hpp"
#include "io/output_target.hpp"
#include "io/requests.hpp"
#include "job/run_job.hpp"
#include "option_checks.hpp"
#include "profile/miss_curve.hpp"
#include "profile/profile_job.hpp"

namespace pleshard::app {

namespace {

struct ProfileCommand {
  std::string checkpoint;
  EngineInputs engine;  // --config, --token-map: the engine option table's
  BatchJobOptions job;
  std::string requests;
  std::string out;
  std::string curve;
  std::string curve_profile;
  std::vector<double> curve_shares{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2};
  CurveOptions curve_options;
  bool quiet = false;
};

// Share of a table's lookups that its `rows` most looked-up rows take.
double coverage(const TableProfile& t, std::int64_t rows) {
  std::int64_t covered = 0;
  for (std::size_t i = 0; i < t.counts.size() && static_cast<std::int64_t>(i) < rows; ++i) covered += t.counts[i];
  return t.lookups > 0 ? static_cast<double>(covered) / static_cast<double>(t.lookups) : 0;
}

void print_summary(const RowProfile& p, const std::string& out, double seconds) {
  std::printf("pleshard profile: %s: %" PRId64 " requests, %" PRId64 " tokens in %.2f s -> %s\n", p.corpus.c_str(),
              p.requests, p.tokens, seconds, out.c_str());
  for (std::size_t d = 0; d < p.tables.size(); ++d) {
    const TableProfile& t = p.tables[d];
    const auto distinct = static_cast<std::int64_t>(t.rows.size());
    std::printf(
        "  table %zu: %" PRId64 " lookups of %" PRId64 " distinct rows (%.2f%% of %" PRId64
        "); the hottest 1%% / 5%% of the table's rows take %.1f%% / %.1f%% of the lookups, repeats %.1f%%\n",
        d, t.lookups, distinct, 100.0 * static_cast<double>(distinct) / static_cast<double>(t.table_rows), t.table_rows,
        100 * coverage(t, t.table_rows / 100), 100 * coverage(t, t.table_rows / 20),
        t.lookups > 0 ? 100.0 * static_cast<double>(t.lookups - distinct) / static_cast<double>(t.lookups) : 0.0);
  }
}

// The curve of every table as CSV, one row per cache size.
std::string curve_csv(const std::vector<std::vector<CurvePoint>>& tables, const std::vector<std::int64_t>& rows) {
  std::string csv = "table,slots,share_of_rows,bound,optimal,dynamic,static,mixed\n";
  char line[256];
  for (std::size_t d = 0; d < tables.size(); ++d)
    for (const CurvePoint& p : tables[d]) {
      std::snprintf(line, sizeof line, "%zu,%" PRId64 ",%.6g,%.6f,%.6f,%.6f,%.6f,%.6f\n", d, p.slots,
                    static_cast<double>(p.slots) / static_cast<double>(rows[d]), p.bound, p.optimal, p.dynamic, p.fixed,
                    p.mixed);
      csv += line;
    }
  return csv;
}

}  // namespace

void add_profile_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<ProfileCommand>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "Row frequencies of a token corpus for every PLE table (for --cache-profile), under mpirun too");
  cmd->add_option("--checkpoint", o->checkpoint,
                  "Checkpoint whose tables the corpus looks up (its hash parameters), or synthetic (--config's)")
      ->required()
      ->check(path_given());
  add_engine_options(*cmd, EngineCommand::profile, EngineTarget{&o->engine, &o->job});
  cmd->add_option("--requests", o->requests, "Token corpus: JSONL ({\"id\": ..., \"tokens\": [...]} a line) or .h5")
      ->required()
      ->check(path_given());
  auto* out = cmd->add_option("--out", o->out, "Profile to write (HDF5)")->check(path_given());
  auto* curve = cmd->add_option("--curve", o->curve,
                                "Miss-ratio curve to write (CSV): the row cache's hit rate on --requests against its "
                                "size, with --cache-profile's hottest rows and without, beside the best possible")
                    ->check(path_given());
  cmd->add_option("--cache-profile", o->curve_profile, "--curve: the profile whose hottest rows the cache holds")
      ->check(path_given());
  cmd->add_option("--curve-shares", o->curve_shares, "--curve: cache sizes as shares of each table's rows")
      ->check(finite_in(1e-12, 1, "a share of the table's rows, > 0 and at most 1"))
      ->capture_default_str();
  cmd->add_option("--step-tokens", o->curve_options.step_tokens, "--curve: tokens per step of the stream")
      ->check(step_tokens_option())
      ->capture_default_str();
  cmd->add_option("--cache-static", o->curve_options.static_share,
                  "--curve: share of the slots for the profile's rows in the mixed cache")
      ->check(finite_in(0, 1, "a share from 0 to 1"))
      ->capture_default_str();
  cmd->add_flag("--quiet", o->quiet, "No progress lines");
  cmd->callback([&action, o, out, curve] {
    if (out->count() == 0 && curve->count() == 0) throw CLI::RequiredError("--out or --curve");
    action = [o] {
      const double start = MPI_Wtime();
      struct Inputs {
        ModelConfig config;
        std::vector<Request> requests;
        std::shared_ptr<PleCheckpoint> checkpoint;
        RowProfile hot;                                    // --curve's --cache-profile
        std::vector<std::shared_ptr<OutputGuard>> guards;  // rank 0's claims on --out and --curve
      };
      const Inputs in = collective_try(MPI_COMM_WORLD, [&] {
        Inputs i;
        i.config = load_named_checkpoint_config(o->checkpoint, o->engine.config, o->engine.token_map);
        CheckpointOptions options;
        options.comm = MPI_COMM_SELF;  // only its tables' metadata is read
        i.checkpoint = open_named_checkpoint(o->checkpoint, i.config, options);
        i.requests = load_requests(o->requests);
        check_token_ranges(i.requests, i.config.vocab_size);
        // Refused before the corpus is counted, and claimed for the job's life.
        std::vector<std::filesystem::path> inputs = model_files(i.config);
        for (const std::string& file : {o->requests, o->curve_profile}) inputs.emplace_back(file);
        for (const std::string& file : i.checkpoint->files()) inputs.emplace_back(file);
        if (world_rank() == 0)
          for (const auto& [file, option] : {std::pair{o->out, "--out"}, std::pair{o->curve, "--curve"}})
            if (!file.empty())
              i.guards.push_back(std::make_shared<OutputGuard>(OutputTarget{file, OutputKind::file, option}, inputs,
                                                               "pleshard profile"));
        if (!o->curve_profile.empty()) {
          if (o->curve.empty()) throw InputError("--cache-profile " + o->curve_profile + ": only with --curve");
          i.hot = read_row_profile_for(o->curve_profile, *i.checkpoint);
        }
        return i;
      });
      // Each rank counts its share of the corpus into one profile: the same corpus and model
      // on every rank, whatever the files' paths.
      require_same_model(MPI_COMM_WORLD, in.config, *in.checkpoint);
      Digest corpus;
      add_requests(corpus, in.requests);
      require_same_on_every_rank(
          MPI_COMM_WORLD,
          {{"the corpus (its requests' ids and tokens)", static_cast<std::int64_t>(corpus.value()), false}},
          "the profile");
      ProfileOptions options;
      if (!o->quiet)
        options.progress = [start](std::int64_t done, std::int64_t total) {
          std::fprintf(stderr, "pleshard profile: %" PRId64 "/%" PRId64 " tokens (%.0f%%), %.1f s\n", done, total,
                       total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0,
                       MPI_Wtime() - start);
        };
      if (!o->out.empty()) {
        const RowProfile profile = collective_try(MPI_COMM_WORLD, [&] {
          return profile_rows(MPI_COMM_WORLD, in.config, *in.checkpoint, in.requests, o->requests, options);
        });
        collective_try(MPI_COMM_WORLD, [&] {
          if (world_rank() == 0) write_row_profile(o->out, profile);
        });
        if (world_rank() == 0) print_summary(profile, o->out, MPI_Wtime() - start);
      }
      if (!o->curve.empty()) {
        // On rank 0: one pass over the stream per cache size and kind.
        collective_try(MPI_COMM_WORLD, [&] {
          if (world_rank() != 0) return;
          const RowProfile& hot = in.hot;
          std::vector<std::vector<CurvePoint>> tables;
          std::vector<std::int64_t> rows;
          for (int d = 0; d < in.config.num_ple_layers(); ++d) {
            rows.push_back(in.checkpoint->table(d).layout.rows);
            CurveOptions c = o->curve_options;
            for (const double share : o->curve_shares)
              c.slots.push_back(static_cast<std::int64_t>(share * static_cast<double>(rows.back())));
            tables.push_back(miss_ratio_curve(in.config, *in.checkpoint, in.requests, d,
                                              hot.tables.empty() ? nullptr : &hot.tables[static_cast<std::size_t>(d)],
                                              c));
          }
          write_text_file(o->curve, curve_csv(tables, rows));
          std::printf("pleshard profile: miss-ratio curve of %s%s -> %s\n", o->requests.c_str(),
                      o->curve_profile.empty() ? "" : (" with the hot rows of " + o->curve_profile).c_str(),
                      o->curve.c_str());
          std::printf("  %5s %12s %8s %8s %8s %8s %8s %8s\n", "table", "slots", "share", "bound", "optimal", "dynamic",
                      "static", "mixed");
          for (std::size_t d = 0; d < tables.size(); ++d)
            for (const CurvePoint& p : tables[d])
              std::printf("  %5zu %12" PRId64 " %7.2f%% %7.1f%% %7.1f%% %7.1f%% %7.1f%% %7.1f%%\n", d, p.slots,
                          100.0 * static_cast<double>(p.slots) / static_cast<double>(rows[d]), 100 * p.bound,
                          100 * p.optimal, 100 * p.dynamic, 100 * p.fixed, 100 * p.mixed);
        });
      }
      return 0;
    };
  });
}

}  // namespace pleshard::app
