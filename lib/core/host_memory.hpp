#pragma once
// The host memory a process may still take, and what it has taken at most: fit checks
// before tables are loaded, and the load report.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace pleshard {

// What can be allocated without swapping or the cgroup's OOM kill, in bytes: MemAvailable
// of /proc/meminfo, or less where the process's cgroup v2 limit leaves less; 0 when
// neither can be read.
[[nodiscard]] std::uint64_t available_host_bytes();

// The process's peak resident memory so far (VmHWM), in bytes.
[[nodiscard]] std::uint64_t peak_resident_bytes();

// Host bytes of a fixed size, not zeroed: for tables and block scales that a read or a
// generator fills whole right away. Zeroing them first is a pass over every page before the
// fill's own: test_large_rows' disk case, which loads 8.6 GB of block scales, took 89 s with
// them zeroed first and 45 s without, on a 2-core VM.
class HostBytes {
 public:
  HostBytes() = default;
  explicit HostBytes(std::size_t size) : data_(std::make_unique_for_overwrite<std::uint8_t[]>(size)), size_(size) {}

  [[nodiscard]] std::span<std::uint8_t> span() { return {data_.get(), size_}; }
  [[nodiscard]] std::span<const std::uint8_t> span() const { return {data_.get(), size_}; }
  [[nodiscard]] std::uint8_t* data() { return data_.get(); }
  [[nodiscard]] const std::uint8_t* data() const { return data_.get(); }
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  std::unique_ptr<std::uint8_t[]> data_;
  std::size_t size_ = 0;
};

}  // namespace pleshard
