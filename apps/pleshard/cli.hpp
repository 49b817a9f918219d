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

// --cache-rows, --cache-gb, --cache-profile, --cache-static (run, bench step).
void add_cache_options(CLI::App& cmd, CacheOptions& cache);
// --token-map FILE (every command that hashes, ckpt make and convert).
void add_token_map_option(CLI::App& cmd, std::string& path);
// --disk-reads cached|direct (run, bench step).
void add_disk_reads_option(CLI::App& cmd, PageCache& reads);
// --host-reads auto|gather|uva|both (run, bench step).
void add_host_reads_option(CLI::App& cmd, HostReads& reads);
// --owner-gpu-plan-from IDS (run, bench step): EngineOptions::owner_gpu_plan_from.
void add_owner_gpu_plan_option(CLI::App& cmd, std::int64_t& ids);
// --owner-fixed-below IDS (run, bench step): EngineOptions::owner_fixed_below.
void add_owner_fixed_option(CLI::App& cmd, std::int64_t& ids);
// --collective-timeout SECONDS (run, bench step): EngineOptions::collective_timeout_s, and the
// stall limit of every wait for other ranks that the command's callback sets (core/watched_wait.hpp).
void add_collective_timeout_option(CLI::App& cmd, double& seconds);

// Rank in MPI_COMM_WORLD; only rank 0 prints results.
[[nodiscard]] int world_rank();

}  // namespace pleshard::app
