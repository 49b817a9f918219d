// pleshard: one executable, one subcommand per job. Exit codes: 0 success, 2 bad usage,
// 1 bad input or a failed run — the same on every rank.

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <mpi.h>

#include "cli.hpp"
#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"
#include "core/kokkos_runtime.hpp"
#include "core/version.hpp"
#include "core/watched_collectives.hpp"
#include "option_checks.hpp"

namespace {

int run_cli(int argc, char** argv) {
  using namespace pleshard;
  CLI::App cli{"pleshard: hashed n-gram per-layer embedding (PLE) tables across ranks"};
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

  const int rank = app::world_rank();
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::vector<std::string> args(argv + 1, argv + argc);
  cli.failure_message([&args](const CLI::App* app, const CLI::Error& e) {
    return app::with_values_quoted(CLI::FailureMessage::simple(app, e), args);
  });
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help, --version
      if (rank == 0) cli.exit(e);
      return 0;
    }
    // An unknown option first: a typo must not read as the option it misspells missing.
    const std::string unknown = app::unknown_argument(cli, args);
    if (rank == 0) {
      if (unknown.empty())
        cli.exit(e);
      else
        std::fprintf(stderr, "pleshard: error: %s\n", unknown.c_str());
    }
    return 2;
  }
  try {
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
    std::unique_ptr<pleshard::KokkosRuntime> kokkos;
    try {
      kokkos = std::make_unique<pleshard::KokkosRuntime>(argc, argv);
    } catch (const std::exception& e) {
      // The same arguments on every rank: each knows, rank 0 says it.
      if (pleshard::app::world_rank() == 0) std::fprintf(stderr, "pleshard: error: Kokkos options: %s\n", e.what());
      MPI_Finalize();
      return 2;
    }
    // The faults the shell tests ask for, read once here; the job asks the plan.
    try {
      pleshard::set_fault_plan(pleshard::fault_plan_from_environment(pleshard::app::world_rank()));
    } catch (const std::exception& e) {
      if (pleshard::app::world_rank() == 0) std::fprintf(stderr, "pleshard: error: %s\n", e.what());
      MPI_Finalize();
      return 2;
    }
    // The --kokkos-* arguments belong to Kokkos; the subcommands see the rest.
    std::vector<char*> args;
    for (int i = 0; i < argc; ++i)
      if (i == 0 || !std::string_view(argv[i]).starts_with("--kokkos-")) args.push_back(argv[i]);
    code = run_cli(static_cast<int>(args.size()), args.data());
  }
  // MPI_Finalize waits for every rank, blocking: a watched barrier first, so that a rank
  // stopped before the end ends the job within the command's stall limit. One stopped after
  // the barrier has no work of the job left; the launcher still ends it with the job.
  pleshard::reach_fault_point(pleshard::FaultPoint::end);
  pleshard::watched_barrier(MPI_COMM_WORLD, "every rank's end of the command");
  MPI_Finalize();
  return code;
}
