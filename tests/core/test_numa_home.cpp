// A rank's NUMA home (core/numa_home.hpp): the machine's nodes counted as sysfs lists them; a
// PCI device's node read whatever case and domain width the name comes in; on one node no
// home is set and the report says "one NUMA node"; on several, a table's pages and the
// process's threads go to the home node; the pages of a table found on the nodes that hold
// them.

#include <gtest/gtest.h>

#include <sched.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <string>

#include "core/host_memory.hpp"
#include "core/numa_home.hpp"

namespace {

using namespace pleshard;
namespace fs = std::filesystem;

int nodes_in_sysfs() {
  int nodes = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/sys/devices/system/node", error)) {
    const std::string name = entry.path().filename().string();
    nodes += name.size() > 4 && name.starts_with("node") && std::isdigit(static_cast<unsigned char>(name[4])) ? 1 : 0;
  }
  return std::max(1, nodes);
}

// The CPUs sysfs lists for `node` ("0-3,8-11").
std::set<int> cpus_of_node(int node) {
  std::ifstream in("/sys/devices/system/node/node" + std::to_string(node) + "/cpulist");
  std::set<int> cpus;
  std::string range;
  while (std::getline(in, range, ',')) {
    const auto dash = range.find('-');
    const int first = std::stoi(range.substr(0, dash));
    const int last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
    for (int cpu = first; cpu <= last; ++cpu) cpus.insert(cpu);
  }
  return cpus;
}

TEST(NumaHome, TheMachinesNodesAsSysfsListsThem) { EXPECT_EQ(numa_node_count(), nodes_in_sysfs()); }

TEST(NumaHome, APciDevicesNodeWhateverTheNamesForm) {
  std::error_code error;
  for (const auto& device : fs::directory_iterator("/sys/bus/pci/devices", error)) {
    const std::string id = device.path().filename().string();  // "0000:00:01.0"
    int expected = -1;
    std::ifstream(device.path() / "numa_node") >> expected;
    EXPECT_EQ(pci_device_numa_node(id), expected) << id;
    std::string upper = "0000" + id;  // CUDA's form: an 8-digit domain, upper case
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(pci_device_numa_node(upper), expected) << upper;
    break;
  }
  EXPECT_EQ(pci_device_numa_node("0000:ff:ff.7-none"), -1);
}

TEST(NumaHome, ATablesPagesOnItsHomeNode) {
  const int nodes = numa_node_count();
  const int home = nodes - 1;  // the last node: not where the pages would go unasked, on most machines
  const std::string note = set_numa_home(home);
  HostBytes table(std::size_t{16} << 20, "test table");
  for (std::size_t i = 0; i < table.size(); i += 4096) table.data()[i] = 1;
  const std::vector<std::uint64_t> by_node = bytes_by_numa_node(table.data(), table.size());
  ASSERT_FALSE(by_node.empty()) << "the kernel would not say where the pages are";
  EXPECT_EQ(std::accumulate(by_node.begin(), by_node.end(), std::uint64_t{0}), table.size());
  if (nodes == 1) {
    // Nothing to choose: no home, and the report says so.
    EXPECT_EQ(note, "one NUMA node");
    EXPECT_EQ(numa_home(), -1);
    EXPECT_EQ(describe_numa_placement(), "one NUMA node");
    EXPECT_EQ(by_node.size(), 1u);
    return;
  }
  EXPECT_EQ(numa_home(), home) << note;
  EXPECT_EQ(describe_numa_placement(), note);
  EXPECT_EQ(note.rfind("node " + std::to_string(home) + ", the GPU's", 0), 0u) << note;
  ASSERT_GT(by_node.size(), static_cast<std::size_t>(home));
  EXPECT_EQ(by_node[static_cast<std::size_t>(home)], table.size());
  // This thread now runs on the home node's CPUs only.
  const std::set<int> on_node = cpus_of_node(home);
  cpu_set_t cpus;
  ASSERT_EQ(::sched_getaffinity(0, sizeof cpus, &cpus), 0);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &cpus)) EXPECT_TRUE(on_node.contains(cpu)) << "CPU " << cpu << " is not node " << home << "'s";
}

}  // namespace
