#pragma once
// The GPU as the library's layers above the kernels ask about it, in every build: whether
// there is one, which it is, how much of its memory is free, its PCI address, and synthetic
// rows made on it. A build without CUDA answers "none" here, so the code that asks is the
// same in both builds; this seam (with exec's step spaces) is where the build's CUDA shows.

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "kernels/common/format_traits.hpp"

namespace pleshard::kernels {

// Whether the library was built with CUDA.
[[nodiscard]] bool built_with_cuda();
// Usable CUDA devices: 0 without a device, a driver, or CUDA in the build.
[[nodiscard]] int gpu_count();
// The current device's ordinal (-1 without CUDA).
[[nodiscard]] int current_gpu();
// Makes `ordinal` the calling thread's current device; SystemError without CUDA.
void set_current_gpu(int ordinal);

// Free and total bytes of the current device's memory (none without CUDA).
struct GpuMemory {
  std::uint64_t free = 0;
  std::uint64_t total = 0;
};
[[nodiscard]] GpuMemory gpu_memory();
// The current device's UUID as two words (zeros without CUDA): the same GPU whatever
// ordinal a rank's CUDA_VISIBLE_DEVICES gives it.
[[nodiscard]] std::array<std::uint64_t, 2> gpu_uuid();
// The PCI bus id of device `ordinal` ("0000:3b:00.0"); SystemError without CUDA.
[[nodiscard]] std::string gpu_pci_bus_id(int ordinal);

// Synthetic rows (kernels/common/synthetic_rows.hpp) made on the current GPU, `band` rows at
// a time, and copied into host spans: make(begin, end, rows, scales) fills rows [begin, end)
// of table `ple_index` (an empty span: that part is not wanted). The same bytes as the host's.
struct SyntheticShape {
  RowFormat format;
  int head_dim;
  std::size_t row_bytes;
  std::size_t scale_bytes;
  std::size_t band;
};
using RowBands = std::function<void(std::int64_t begin, std::int64_t end, std::span<std::uint8_t> rows,
                                    std::span<std::uint8_t> scales)>;
// SystemError without CUDA, or where the GPU's buffers cannot be had.
[[nodiscard]] RowBands gpu_synthetic_rows(const SyntheticShape& shape, std::uint64_t seed, int ple_index);

}  // namespace pleshard::kernels
