#pragma once
// The command line agreed over the ranks before any acts on it. Ranks launched as several
// programs (MPMD: `mpirun -n 1 A : -n 1 B`) may be given different arguments, and ranks that
// ran different commands, or one command with other options, would cross their collectives:
// a hang until the collective timeout, an MPI error about the collective, or a blend of two
// jobs' data. Each rank's own answer to its command line is agreed first (bad usage on one
// rank ends every rank), then the command and its options are compared.

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace pleshard::app {

// The job's first collective (over MPI_COMM_WORLD), of a form kept from one build to the
// next: whether every rank runs the same build (its version and commit); rank 0 says where
// not. Ranks of two builds would otherwise disagree on every later message.
[[nodiscard]] bool same_build_on_every_rank();

// What a rank makes of its own command line before anything runs: go on, answered (--help,
// --version: exit 0), or refused (bad usage: exit 2).
enum class Answer : int { go_on = 0, answered = 1, refused = 2 };

// Who prints the agreed answer: whether this rank is the lowest that gave it, and whether
// every rank gave it (then it speaks for all: its message names no rank).
struct Speaker {
  bool me = false;
  bool for_every_rank = false;
};

// `mine`, agreed over every rank (collective over MPI_COMM_WORLD, `what` naming the wait):
// the gravest answer holds on every rank, and `speak` is called on each with its part. --help
// or --version on some ranks only is bad usage. Returns the command's exit code, or -1 to go on.
int agree_on(Answer mine, const char* what, const std::function<void(const Speaker&)>& speak);

// `line` ("pleshard: error: ...") as `speaker`, this rank, prints it: naming the rank where
// not every rank gave it.
void print_error_line(const std::string& line, const Speaker& speaker);

// Collective over MPI_COMM_WORLD after `cli` parsed on every rank: the command given, then
// each of its options (a path by whether it is given: a node may keep its copy of a file
// elsewhere, and what files hold is compared where they are read; --threads not at all: the
// ranks' thread counts may differ), the same on every rank. Otherwise bad usage on every
// rank: AgreedError naming the first that differs.
void require_same_command_line(const CLI::App& cli);

}  // namespace pleshard::app
