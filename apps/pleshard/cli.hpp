#pragma once
// Subcommand registration for the pleshard executable. Each add_* declares its options
// and, when chosen, stores the action to run in `action`.

#include <functional>

#include <mpi.h>
#include <CLI/CLI.hpp>

#include "engine/ple_engine.hpp"

namespace pleshard::app {

using Action = std::function<int()>;

void add_ids_command(CLI::App& app, Action& action);
void add_run_command(CLI::App& app, Action& action);
void add_bench_command(CLI::App& app, Action& action);
void add_ckpt_command(CLI::App& app, Action& action);
void add_embed_command(CLI::App& app, Action& action);
void add_profile_command(CLI::App& app, Action& action);
void add_help_options_command(CLI::App& app, Action& action);

// --token-map FILE on the commands without the engine's options (ids, ckpt make and convert,
// bench hash, profile): the engine option table's entry, set into a path of their own.
void add_token_map_option(CLI::App& cmd, std::string& path);

// Rank in MPI_COMM_WORLD; only rank 0 prints results.
[[nodiscard]] int world_rank();

}  // namespace pleshard::app
