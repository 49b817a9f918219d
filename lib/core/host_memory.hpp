#pragma once
// The host memory a process may still take, and what it has taken at most (fit checks
// before tables are loaded, and the load report); a table's own bytes of it.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace pleshard {

// What can be allocated without swapping or the cgroup's OOM kill, in bytes: MemAvailable
// of /proc/meminfo, or less where the process's cgroup v2 limit leaves less; 0 when
// neither can be read.
[[nodiscard]] std::uint64_t available_host_bytes();

// What tables may still take: available_host_bytes() and the reserved 2 MiB pages still free,
// which MemAvailable leaves out and only tables' memory takes (core/huge_pages.hpp); 0 where
// available_host_bytes() cannot be read.
[[nodiscard]] std::uint64_t available_table_bytes();

// The process's peak resident memory so far (VmHWM), in bytes.
[[nodiscard]] std::uint64_t peak_resident_bytes();

// Host bytes of a fixed size for a table (rows, block scales) that a read or a generator fills
// whole right away: a mapping of their own (core/huge_pages.hpp), on 2 MiB pages where the
// machine offers them and on the process's NUMA home node, never zeroed by a pass of ours
// (the kernel's pages read as zeros): test_large_rows' disk case, which loads 8.6 GB of
// block scales, took 89 s with them zeroed first and 45 s without, on a 2-core VM.
// Move-only.
class HostBytes {
 public:
  HostBytes() = default;
  // InputError naming `what` where the host cannot map them.
  explicit HostBytes(std::size_t size, const std::string& what = "host memory");
  ~HostBytes();
  HostBytes(HostBytes&& other) noexcept;
  HostBytes& operator=(HostBytes&& other) noexcept;
  HostBytes(const HostBytes&) = delete;
  HostBytes& operator=(const HostBytes&) = delete;

  [[nodiscard]] std::span<std::uint8_t> span() { return {data_, size_}; }
  [[nodiscard]] std::span<const std::uint8_t> span() const { return {data_, size_}; }
  [[nodiscard]] std::uint8_t* data() { return data_; }
  [[nodiscard]] const std::uint8_t* data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace pleshard
