// pleshard: one executable, one subcommand per job. Exit codes: 0 success, 2 bad usage,
// 1 bad input or a failed run — the same on every rank.

#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <mpi.h>

#include "cli.hpp"
#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "core/kokkos_runtime.hpp"
#include "core/rank_threads.hpp"
#include "core/version.hpp"
#include "core/watched_collectives.hpp"
#include "engine_option_cli.hpp"
#include "help_format.hpp"
#include "option_checks.hpp"
#include "same_command_line.hpp"

namespace {

// --threads N on every command that runs (CLI11 checks it there, and each --help shows it):
// the engine option table's entry.
void add_threads_option(CLI::App& app, std::int64_t& threads) {
  for (CLI::App* cmd : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!cmd->get_subcommands([](const CLI::App*) { return true; }).empty()) {
      add_threads_option(*cmd, threads);
      continue;
    }
    pleshard::EngineTarget target;
    target.threads = &threads;
    CLI::Option* option =
        pleshard::app::add_engine_option(*cmd, pleshard::engine_option(pleshard::Option::threads), target);
    option->description(option->get_description() + "; --kokkos-threads=N is another name");
  }
}

// `args`: the command line less the --kokkos-* arguments, for the commands; `argc` and
// `argv`: all of it, for Kokkos. `kokkos_threads`: --kokkos-threads=N, --threads' other name.
int run_cli(const std::vector<char*>& args, int argc, char** argv, std::optional<std::size_t> kokkos_threads) {
  using namespace pleshard;
  CLI::App cli{"pleshard: hashed n-gram per-layer embedding (PLE) tables across ranks"};
  // Before the commands are added: each takes its formatter from its parent.
  cli.formatter(std::make_shared<app::PlainHelp>());
  cli.require_subcommand(1);
  const BuildVersion version = build_version();
  cli.set_version_flag("--version",
                       "pleshard " + version_string() +
                           (version.commit.empty() ? std::string(" (not built from a git checkout)")
                                                   : " (git commit " + version.commit +
                                                         (version.modified ? ", with uncommitted changes)" : ")")),
                       "Print the version (and the git commit built from) and exit");
  app::Action action;
  app::add_ids_command(cli, action);
  app::add_run_command(cli, action);
  app::add_embed_command(cli, action);
  app::add_ckpt_command(cli, action);
  app::add_profile_command(cli, action);
  app::add_bench_command(cli, action);
  app::add_help_options_command(cli, action);
  std::int64_t threads = 0;
  add_threads_option(cli, threads);

  const int rank = app::world_rank();
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::vector<std::string> words(args.begin() + 1, args.end());
  cli.failure_message(
      [&words](const CLI::App* app, const CLI::Error& e) { return app::usage_error(*app, e, words) + "\n"; });
  app::Answer parsed = app::Answer::go_on;
  std::exception_ptr parse_error;  // CLI11's answer: --help, --version, or the usage error
  try {
    cli.parse(static_cast<int>(args.size()), args.data());
    if (threads > 0 && kokkos_threads)
      throw CLI::ValidationError("--threads and --kokkos-threads", "the same count by two names: give one");
  } catch (const CLI::ParseError& e) {
    parse_error = std::current_exception();
    parsed = e.get_exit_code() == 0 ? app::Answer::answered : app::Answer::refused;
  }
  const int parse_exit = app::agree_on(parsed, "every rank's command line", [&](const app::Speaker& speaker) {
    if (!speaker.me) return;
    try {
      std::rethrow_exception(parse_error);
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == 0) {
        cli.exit(e);
        return;
      }
      // An unknown option first: a typo must not read as the option it misspells missing.
      const std::string unknown = app::unknown_argument(cli, words);
      app::print_error_line(unknown.empty() ? app::usage_error(cli, e, words) : "pleshard: error: " + unknown, speaker);
    }
  });
  if (parse_exit >= 0) return parse_exit;
  try {
    app::require_same_command_line(cli);
  } catch (const AgreedError& e) {
    if (rank == 0) std::fprintf(stderr, "pleshard: error: %s\n", e.what());
    return 2;
  }
  try {
    // The rank's threads, agreed once the command is known and before Kokkos starts on them.
    const RankThreads rank_threads =
        threads > 0 ? agree_rank_threads(MPI_COMM_WORLD, static_cast<std::size_t>(threads), "--threads ")
                    : agree_rank_threads(MPI_COMM_WORLD, kokkos_threads, "--kokkos-threads=");
    use_rank_threads(rank_threads);
    std::unique_ptr<KokkosRuntime> kokkos;
    std::string kokkos_error;
    try {
      kokkos = std::make_unique<KokkosRuntime>(argc, argv, rank_threads.count);
    } catch (const std::exception& e) {
      kokkos_error = e.what();
    }
    const int kokkos_exit =
        app::agree_on(kokkos ? app::Answer::go_on : app::Answer::refused, "every rank's Kokkos options",
                      [&](const app::Speaker& speaker) {
                        if (speaker.me)
                          app::print_error_line("pleshard: error: Kokkos options: " + kokkos_error, speaker);
                      });
    if (kokkos_exit >= 0) return kokkos_exit;
    return action();
  } catch (const AgreedError& e) {
    if (rank == 0) std::fprintf(stderr, "pleshard: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    // Only this rank knows: say which rank, then take the others down with it.
    if (ranks > 1) {
      std::fprintf(stderr, "pleshard: rank %d: error: %s\n", rank, e.what());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::fprintf(stderr, "pleshard: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 0;
  {
    const int rank = pleshard::app::world_rank();
    std::optional<std::size_t> kokkos_threads;
    if (!pleshard::app::same_build_on_every_rank()) {
      code = 2;
    } else {
      try {
        kokkos_threads = pleshard::kokkos_threads_option(argc, argv);
        // The faults the shell tests ask for, read once here; the job asks the plan.
        pleshard::set_fault_plan(pleshard::fault_plan_from_environment(rank));
        // The --kokkos-* arguments belong to Kokkos; the subcommands see the rest.
        std::vector<char*> args;
        for (int i = 0; i < argc; ++i)
          if (i == 0 || !std::string_view(argv[i]).starts_with("--kokkos-")) args.push_back(argv[i]);
        code = run_cli(args, argc, argv, kokkos_threads);
      } catch (const std::exception& e) {
        // Where the others parse their command lines: agreed with theirs.
        const std::string message = e.what();
        code = pleshard::app::agree_on(pleshard::app::Answer::refused, "every rank's command line",
                                       [&](const pleshard::app::Speaker& speaker) {
                                         if (speaker.me)
                                           pleshard::app::print_error_line("pleshard: error: " + message, speaker);
                                       });
      }
    }
  }
  // MPI_Finalize waits for every rank, blocking: a watched barrier first, so that a rank
  // stopped before the end ends the job within the command's stall limit. One stopped after
  // the barrier has no work of the job left; the launcher still ends it with the job.
  pleshard::reach_fault_point(pleshard::FaultPoint::end);
  pleshard::watched_barrier(MPI_COMM_WORLD, "every rank's end of the command");
  MPI_Finalize();
  return code;
}
