#include "kernels/gpu_device.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/error.hpp"

#if PLESHARD_HAVE_CUDA
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/synthetic_cuda.hpp"
#endif

namespace pleshard::kernels {

#if PLESHARD_HAVE_CUDA

bool built_with_cuda() { return true; }
int gpu_count() { return cuda_device_count(); }

int current_gpu() {
  int device = -1;
  PLESHARD_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

void set_current_gpu(int ordinal) { PLESHARD_CUDA_CHECK(cudaSetDevice(ordinal)); }

GpuMemory gpu_memory() {
  std::size_t free = 0;
  std::size_t total = 0;
  PLESHARD_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return {free, total};
}

std::array<std::uint64_t, 2> gpu_uuid() {
  cudaDeviceProp prop{};
  PLESHARD_CUDA_CHECK(cudaGetDeviceProperties(&prop, current_gpu()));
  std::array<std::uint64_t, 2> words{};
  static_assert(sizeof prop.uuid.bytes == sizeof words);
  std::memcpy(words.data(), prop.uuid.bytes, sizeof words);
  return words;
}

std::string gpu_pci_bus_id(int ordinal) {
  char bus_id[32] = {};
  PLESHARD_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, ordinal));
  return bus_id;
}

namespace {

// A band's rows made on the maker's device and copied down.
class GpuRowMaker {
 public:
  explicit GpuRowMaker(const SyntheticShape& shape)
      : device_(current_gpu()),
        shape_(shape),
        rows_(shape.band * shape.row_bytes),
        scales_(shape.band * shape.scale_bytes) {}

  void make(std::uint64_t seed, int ple_index, std::int64_t begin, std::int64_t end, std::span<std::uint8_t> rows,
            std::span<std::uint8_t> scales) {
    // Writer threads call this: the CUDA device is a thread's own, so set the maker's.
    set_current_gpu(device_);
    const std::size_t row_bytes = shape_.row_bytes;
    const std::size_t scale_bytes = shape_.scale_bytes;
    const auto band = static_cast<std::int64_t>(shape_.band);
    for (std::int64_t first = begin; first < end; first += band) {
      const auto n = static_cast<std::size_t>(std::min(band, end - first));
      const SyntheticTarget target{
          shape_.format, shape_.head_dim, seed,           ple_index,  first, static_cast<std::int64_t>(n),
          rows_.data(),  row_bytes,       scales_.data(), scale_bytes};
      make_synthetic_rows_cuda(target, stream_.get());
      const auto at = static_cast<std::size_t>(first - begin);
      if (!rows.empty())
        PLESHARD_CUDA_CHECK(cudaMemcpyAsync(rows.data() + at * row_bytes, rows_.data(), n * row_bytes,
                                            cudaMemcpyDeviceToHost, stream_.get()));
      if (scale_bytes != 0 && !scales.empty())
        PLESHARD_CUDA_CHECK(cudaMemcpyAsync(scales.data() + at * scale_bytes, scales_.data(), n * scale_bytes,
                                            cudaMemcpyDeviceToHost, stream_.get()));
      stream_.synchronize();
    }
  }

 private:
  int device_;
  SyntheticShape shape_;
  DeviceBuffer<std::uint8_t> rows_;
  DeviceBuffer<std::uint8_t> scales_;
  OwnedStream stream_;
};

}  // namespace

RowBands gpu_synthetic_rows(const SyntheticShape& shape, std::uint64_t seed, int ple_index) {
  auto maker = std::make_shared<GpuRowMaker>(shape);
  return [maker, seed, ple_index](std::int64_t begin, std::int64_t end, std::span<std::uint8_t> rows,
                                  std::span<std::uint8_t> scales) {
    maker->make(seed, ple_index, begin, end, rows, scales);
  };
}

#else

namespace {

[[noreturn]] void no_cuda(const std::string& what) {
  throw SystemError(what + ": this build has no CUDA (rebuild where nvcc is found)");
}

}  // namespace

bool built_with_cuda() { return false; }
int gpu_count() { return 0; }
int current_gpu() { return -1; }
void set_current_gpu(int) { no_cuda("set_current_gpu"); }
GpuMemory gpu_memory() { return {}; }
std::array<std::uint64_t, 2> gpu_uuid() { return {0, 0}; }
std::string gpu_pci_bus_id(int) { no_cuda("gpu_pci_bus_id"); }
RowBands gpu_synthetic_rows(const SyntheticShape&, std::uint64_t, int) { no_cuda("rows made on the GPU"); }

#endif

}  // namespace pleshard::kernels
