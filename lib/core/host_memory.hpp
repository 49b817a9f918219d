#pragma once
// The host memory a process may still take, and what it has taken at most: fit checks
// before tables are loaded, and the load report.

#include <cstdint>

namespace pleshard {

// MemAvailable of /proc/meminfo (what can be allocated without swapping), in bytes; 0 when
// it cannot be read.
[[nodiscard]] std::uint64_t available_host_bytes();

// The process's peak resident memory so far (VmHWM), in bytes.
[[nodiscard]] std::uint64_t peak_resident_bytes();

}  // namespace pleshard
