#include "core/numa_home.hpp"

#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace pleshard {

namespace {

struct Home {
  int node = -1;
  std::string note;  // what set_numa_home did; empty: never asked (no GPU)
};

Home& home() {
  static Home h;
  return h;
}

std::string first_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The numbers of a sysfs list ("0-3,8,10-11").
std::vector<int> list_numbers(const std::string& list) {
  std::vector<int> numbers;
  std::stringstream in(list);
  for (std::string piece; std::getline(in, piece, ',');) {
    int first = 0;
    int last = 0;
    const int read = std::sscanf(piece.c_str(), "%d-%d", &first, &last);
    if (read < 1) continue;
    for (int n = first; n <= (read == 2 ? last : first); ++n) numbers.push_back(n);
  }
  return numbers;
}

// Moves every thread of the process onto `cpus`; how many moved.
int move_threads(const cpu_set_t& cpus) {
  int moved = 0;
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", error)) {
    const auto tid = static_cast<pid_t>(std::stol(task.path().filename().string()));
    if (::sched_setaffinity(tid, sizeof cpus, &cpus) == 0) ++moved;
  }
  return moved;
}

}  // namespace

int numa_node_count() {
  const std::vector<int> nodes = list_numbers(first_line("/sys/devices/system/node/online"));
  return std::max<int>(1, static_cast<int>(nodes.size()));
}

int pci_device_numa_node(const std::string& bus_id) {
  std::string id = bus_id;
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return std::tolower(c); });
  // CUDA names the domain with 8 digits ("00000000:17:00.0"), sysfs with 4.
  if (const auto colon = id.find(':'); colon > 4 && colon != std::string::npos) id.erase(0, colon - 4);
  const std::string text = first_line("/sys/bus/pci/devices/" + id + "/numa_node");
  try {
    return text.empty() ? -1 : std::stoi(text);
  } catch (const std::exception&) {
    return -1;
  }
}

int numa_home() { return home().node; }

std::string set_numa_home(int node) {
  const int nodes = numa_node_count();
  if (nodes <= 1) return home().note = "one NUMA node";
  if (node < 0) return home().note = "the GPU's NUMA node is unknown: pages where the threads first write them";
  home().node = node;
  std::string note = "node " + std::to_string(node) + ", the GPU's (of " + std::to_string(nodes) + " NUMA nodes)";
  cpu_set_t on_node;
  CPU_ZERO(&on_node);
  for (const int cpu : list_numbers(first_line("/sys/devices/system/node/node" + std::to_string(node) + "/cpulist")))
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &on_node);
  if (CPU_COUNT(&on_node) == 0) return home().note = note + "; the node has no CPUs: threads stay";
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  (void)::sched_getaffinity(0, sizeof allowed, &allowed);
  cpu_set_t both;
  CPU_AND(&both, &on_node, &allowed);
  const cpu_set_t& cpus = CPU_COUNT(&both) > 0 ? both : on_node;
  const int moved = move_threads(cpus);
  note += moved > 0 ? "; threads on " + std::to_string(CPU_COUNT(&cpus)) + " of its CPUs"
                    : "; its CPUs are not this process's to use: threads stay";
  return home().note = note;
}

void prefer_numa_home(void* p, std::size_t bytes) {
  const int node = home().node;
  if (node < 0 || p == nullptr || bytes == 0) return;
  constexpr int k_word = 8 * sizeof(unsigned long);
  std::vector<unsigned long> mask(static_cast<std::size_t>(node / k_word + 1), 0);
  mask[static_cast<std::size_t>(node / k_word)] |= 1UL << (node % k_word);
  // A wish, not a bind: a full node spills to the others rather than failing the load. Where
  // the call is refused (a container's seccomp) the pages go where they are written; the
  // report measures where they went.
  (void)::syscall(SYS_mbind, p, bytes, MPOL_PREFERRED, mask.data(), mask.size() * k_word + 1, 0);
}

std::vector<std::uint64_t> bytes_by_numa_node(const void* p, std::size_t bytes) {
  if (p == nullptr || bytes == 0) return {};
  constexpr std::size_t k_most_samples = std::size_t{1} << 16;
  constexpr std::size_t k_page = 4096;
  std::size_t stride = std::size_t{2} << 20;
  if (bytes / stride > k_most_samples) stride = (bytes / k_most_samples + k_page - 1) / k_page * k_page;
  const auto first = reinterpret_cast<std::uintptr_t>(p) / k_page * k_page;
  std::vector<void*> pages;
  for (std::size_t at = 0; at < bytes; at += stride) pages.push_back(reinterpret_cast<void*>(first + at));
  std::vector<int> status(pages.size(), -1);
  // Asks the node of each page, moving none.
  if (::syscall(SYS_move_pages, 0, pages.size(), pages.data(), nullptr, status.data(), 0) != 0) return {};
  std::vector<std::uint64_t> by_node;
  for (std::size_t i = 0; i < pages.size(); ++i) {
    if (status[i] < 0) continue;  // not resident
    const auto node = static_cast<std::size_t>(status[i]);
    if (by_node.size() <= node) by_node.resize(node + 1, 0);
    by_node[node] += std::min(stride, bytes - i * stride);
  }
  return by_node;
}

std::string describe_numa_placement() {
  if (!home().note.empty()) return home().note;
  const int nodes = numa_node_count();
  return nodes <= 1 ? "one NUMA node"
                    : "no GPU: pages where the threads first write them (" + std::to_string(nodes) + " NUMA nodes)";
}

}  // namespace pleshard
