#pragma once
// A rank's NUMA home: the node of its GPU's PCI device, where its tables' pages go (the GPU
// reads the pinned tier's over PCIe from there) and its threads run. Set once, when the rank
// binds its GPU; a rank without a GPU has none, and its pages stay where its threads first
// write them. On a machine of one node there is nothing to choose and nothing is set.
// System calls only (mbind, move_pages, sched_setaffinity): no libnuma.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pleshard {

// The machine's NUMA nodes (/sys/devices/system/node/online; 1 where it says nothing).
[[nodiscard]] int numa_node_count();

// The node of the PCI device `bus_id` ("0000:17:00.0", any case), -1 where sysfs names none.
[[nodiscard]] int pci_device_numa_node(const std::string& bus_id);

// This process's home node; -1: none.
[[nodiscard]] int numa_home();

// Makes `node` the process's home where the machine has several nodes (a no-op on one, or
// for -1): later table memory prefers its pages, and every thread of the process moves onto
// its CPUs (those of them the process may use already, else all of them: the GPU's node
// wins over a launcher's binding that did not know the GPU). One line saying what was done,
// for the log and the report.
std::string set_numa_home(int node);

// Asks that the pages of [p, p + bytes), not yet written, come from the home node (and from
// others once it is full); nothing without a home.
void prefer_numa_home(void* p, std::size_t bytes);

// Resident bytes of [p, p + bytes) by node (index = node), judged from one page of every
// 2 MiB; pages not yet written count nowhere.
[[nodiscard]] std::vector<std::uint64_t> bytes_by_numa_node(const void* p, std::size_t bytes);

// The report's line on where tables' pages go: "one NUMA node", "node 1, the GPU's (of 2
// NUMA nodes)", or, without a GPU, where the threads first write them.
[[nodiscard]] std::string describe_numa_placement();

}  // namespace pleshard
