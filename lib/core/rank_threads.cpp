#include "core/rank_threads.hpp"

#include <sched.h>

#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/collective.hpp"
#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/mpi_check.hpp"
#include "core/option_names.hpp"
#include "core/parallel.hpp"
#include "core/watched_collectives.hpp"

namespace pleshard {

namespace {

constexpr EnumNames<ThreadSource, 5> k_sources{{{ThreadSource::asked, "asked"},
                                                {ThreadSource::slurm, "SLURM_CPUS_PER_TASK"},
                                                {ThreadSource::omp, "OMP_NUM_THREADS"},
                                                {ThreadSource::affinity, "affinity"},
                                                {ThreadSource::cores, "cores"}}};

const std::string k_threads_range = "a whole number of threads from 1 to " + std::to_string(k_max_rank_threads);

std::mutex g_lock;
std::optional<RankThreads> g_threads;  // under g_lock
std::atomic<bool> g_warned{false};

// The count `name` holds; none where it is unset or empty.
std::optional<std::size_t> count_in(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  const std::string_view text(value);
  // OMP_NUM_THREADS may give a count per nesting level ("8,2"): the outermost is the rank's.
  const std::string_view first = text.substr(0, text.find(','));
  std::size_t count = 0;
  const auto [end, error] = std::from_chars(first.data(), first.data() + first.size(), count);
  if (error != std::errc() || end != first.data() + first.size() || count < 1 || count > k_max_rank_threads)
    throw InputError(std::string(name) + "=" + quoted_value(text) + ": expected " + k_threads_range +
                     " (or leave it unset)");
  return count;
}

// What a rank tells the others of its node: its CPU affinity mask, and the count it was
// given (0: its share of its mask).
struct NodeEntry {
  cpu_set_t mask;
  std::uint64_t given;
};

cpu_set_t affinity_mask() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) != 0)
    for (std::size_t cpu = 0; cpu < host_cores() && cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &mask);
  return mask;
}

// The node's ranks whose mask is the same as rank r's (r among them).
std::size_t sharing(const std::vector<NodeEntry>& node, std::size_t r) {
  std::size_t same = 0;
  for (const NodeEntry& e : node) same += CPU_EQUAL(&e.mask, &node[r].mask) ? 1 : 0;
  return same;
}

std::size_t threads_of(const std::vector<NodeEntry>& node, std::size_t r) {
  if (node[r].given > 0) return node[r].given;
  const auto cores = static_cast<std::size_t>(CPU_COUNT(&node[r].mask));
  return std::max<std::size_t>(1, cores / sharing(node, r));
}

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Rank 0's warning where some node's ranks run more threads than their masks hold cores.
void warn_oversubscribed(MPI_Comm comm, const std::vector<NodeEntry>& node, int node_rank, const RankThreads& mine) {
  std::size_t threads = 0;
  cpu_set_t cores;
  CPU_ZERO(&cores);
  for (std::size_t r = 0; r < node.size(); ++r) {
    threads += threads_of(node, r);
    CPU_OR(&cores, &cores, &node[r].mask);
  }
  const auto core_count = static_cast<std::size_t>(CPU_COUNT(&cores));
  const bool over = threads > core_count;
  std::int64_t nodes[2] = {node_rank == 0 && over ? 1 : 0, node_rank == 0 ? 1 : 0};  // oversubscribed, all
  watched_allreduce(nodes, 2, MPI_INT64_T, MPI_SUM, comm, "the ranks' threads against their node's cores");
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0 || nodes[0] == 0 || g_warned.exchange(true)) return;
  const std::string advice = ": oversubscribed, every thread slowed; give each rank fewer (" +
                             option_with(Option::threads, "N") + "), or run fewer ranks a node";
  if (!over) {
    log_warning(std::to_string(nodes[0]) + " of " + std::to_string(nodes[1]) +
                " nodes run more threads than their ranks have cores" + advice);
    return;
  }
  log_warning("node " + processor_name() + ": " + plural(node.size(), "rank runs ", "ranks run ") +
              plural(threads, "thread", "threads") + " on " + plural(core_count, "core", "cores") + " (rank 0's " +
              std::to_string(mine.count) + " from " + mine.how + ")" + advice +
              (nodes[0] > 1 ? " (" + std::to_string(nodes[0]) + " of " + std::to_string(nodes[1]) + " nodes alike)"
                            : std::string()));
}

}  // namespace

const char* to_string(ThreadSource source) { return name_of(k_sources, source); }

std::optional<RankThreads> threads_from_environment() {
  if (const auto count = count_in("SLURM_CPUS_PER_TASK"))
    return RankThreads{*count, ThreadSource::slurm, "SLURM_CPUS_PER_TASK=" + std::to_string(*count)};
  if (const auto count = count_in("OMP_NUM_THREADS"))
    return RankThreads{*count, ThreadSource::omp, "OMP_NUM_THREADS=" + std::to_string(*count)};
  return std::nullopt;
}

RankThreads agree_rank_threads(MPI_Comm comm, std::optional<std::size_t> asked, std::string_view asked_as) {
  // Checked on every rank before the node's ranks meet: a bad value ends every rank alike.
  const std::optional<RankThreads> given = collective_try(comm, [&]() -> std::optional<RankThreads> {
    if (!asked) return threads_from_environment();
    const std::string how = std::string(asked_as) + std::to_string(*asked);
    if (*asked < 1 || *asked > k_max_rank_threads) throw InputError(how + ": expected " + k_threads_range);
    return RankThreads{*asked, ThreadSource::asked, how};
  });
  MPI_Comm node_comm = watched_split_shared(comm, 0, "the ranks' threads");
  int node_rank = 0;
  int node_ranks = 1;
  MPI_Comm_rank(node_comm, &node_rank);
  MPI_Comm_size(node_comm, &node_ranks);
  const NodeEntry mine{affinity_mask(), given ? given->count : 0};
  std::vector<NodeEntry> node(static_cast<std::size_t>(node_ranks));
  watched_allgather(&mine, node.data(), static_cast<int>(sizeof(NodeEntry)), MPI_BYTE, node_comm,
                    "the CPU affinity masks of the node's ranks");
  MPI_Comm_free(&node_comm);
  RankThreads threads;
  if (given) {
    threads = *given;
  } else {
    const auto me = static_cast<std::size_t>(node_rank);
    const std::size_t same = sharing(node, me);
    threads = {threads_of(node, me), ThreadSource::affinity,
               "its CPU affinity mask: " + plural(static_cast<std::size_t>(CPU_COUNT(&mine.mask)), "core", "cores") +
                   (same > 1 ? " shared by " + std::to_string(same) + " ranks" : "")};
  }
  warn_oversubscribed(comm, node, node_rank, threads);
  return threads;
}

void use_rank_threads(const RankThreads& threads) {
  const std::lock_guard lock(g_lock);
  set_host_threads(threads.count);
  g_threads = threads;
}

RankThreads rank_threads() {
  const std::lock_guard lock(g_lock);
  if (g_threads) return *g_threads;
  return {host_threads(), ThreadSource::cores, "the machine's cores"};
}

}  // namespace pleshard
