#pragma once
// The host memory a process may still take, and what it has taken at most: fit checks
// before tables are loaded, and the load report.

#include <cstdint>

namespace pleshard {

// What can be allocated without swapping or the cgroup's OOM kill, in bytes: MemAvailable
// of /proc/meminfo, or less where the process's cgroup v2 limit leaves less; 0 when
// neither can be read.
[[nodiscard]] std::uint64_t available_host_bytes();

// The process's peak resident memory so far (VmHWM), in bytes.
[[nodiscard]] std::uint64_t peak_resident_bytes();

}  // namespace pleshard
