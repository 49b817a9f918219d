#pragma once
// The threads of a rank's host work (the host kernels, a host gather, making and reading
// rows), as the launcher bound the rank: every core it was given, unless asked otherwise.
// Each command and each Python Engine agrees on them once, before any work, and the process
// keeps them (set_host_threads).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <mpi.h>

namespace pleshard {

// The most threads a rank is given (--threads, the environment).
inline constexpr std::size_t k_max_rank_threads = 4096;

enum class ThreadSource { asked, slurm, omp, affinity, cores };

// The report's name of a source: asked, SLURM_CPUS_PER_TASK, OMP_NUM_THREADS, affinity, cores.
[[nodiscard]] const char* to_string(ThreadSource source);

struct RankThreads {
  std::size_t count = 1;
  ThreadSource source = ThreadSource::cores;
  std::string how;  // for people: "--threads 2", "OMP_NUM_THREADS=4", "its CPU affinity mask: 4 cores ..."
};

// The count from the environment the launcher set: SLURM_CPUS_PER_TASK, else OMP_NUM_THREADS
// (the first of a list per nesting level); none when neither is set (or either is empty).
// InputError naming the variable for a value that is no count from 1 to k_max_rank_threads.
[[nodiscard]] std::optional<RankThreads> threads_from_environment();

// This rank's threads: `asked` (named `asked_as`, as "--threads " or "threads="), else the
// environment's, else the cores of the rank's CPU affinity mask, split evenly among the
// node's ranks that have the same mask (an unbound launch gives every rank the whole node;
// ranks bound to a socket share its cores). Collective over `comm`: a bad value is an
// AgreedError on every rank. Rank 0 of `comm` warns, once a process, when the threads of a
// node's ranks outnumber the cores their masks hold together.
[[nodiscard]] RankThreads agree_rank_threads(MPI_Comm comm, std::optional<std::size_t> asked,
                                             std::string_view asked_as);

// The process's threads from now on (set_host_threads), and where they came from.
void use_rank_threads(const RankThreads& threads);
// What use_rank_threads was last given; before that, the machine's cores.
[[nodiscard]] RankThreads rank_threads();

}  // namespace pleshard
