#pragma once
// Where one step's buffers live and its kernels run: the host (Kokkos), or one GPU and the
// engine's stream. The engine, the exchange and the storage tiers are written once against
// this interface; the memory they pass each other belongs to the space.

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "kernels/common/ngram_hash.hpp"
#include "format/row_format.hpp"
#include "kernels/common/row_decode.hpp"

namespace pleshard {

class StepSpace {
 public:
  virtual ~StepSpace() = default;

  [[nodiscard]] virtual bool on_device() const = 0;
  [[nodiscard]] virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p) noexcept = 0;

  // Ordered on the space's stream (the host space runs them at once).
  virtual void fill_zero(void* p, std::size_t bytes) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_from_host(void* dst, const void* host, std::size_t bytes) = 0;
  // Returns when `host` holds the bytes (waits for the stream).
  virtual void copy_to_host(void* host, const void* src, std::size_t bytes) = 0;
  virtual void synchronize() = 0;

  // The kernels: n-gram ids of a batch whose arrays live in the space, and decoding rows of
  // `table` (in the space) into `out`.
  virtual void hash(const kernels::NgramHashParams& params, const kernels::NgramBatchView& batch,
                    std::int64_t* ids) = 0;
  virtual void decode_rows(const kernels::TableView& table, const std::int64_t* ids, std::int64_t num_ids,
                           OutDtype dtype, void* out) = 0;
};

[[nodiscard]] std::unique_ptr<StepSpace> make_host_space();
#if PLESHARD_HAVE_CUDA
// The current CUDA device with a stream of its own.
[[nodiscard]] std::unique_ptr<StepSpace> make_cuda_space();
#endif

// Bytes in a space that grow on demand and never shrink, so that steady-state steps (and a
// captured CUDA graph) see the same addresses.
class SpaceBuffer {
 public:
  explicit SpaceBuffer(StepSpace& space) : space_(&space) {}
  SpaceBuffer(const SpaceBuffer&) = delete;
  SpaceBuffer& operator=(const SpaceBuffer&) = delete;
  SpaceBuffer(SpaceBuffer&& other) noexcept;
  SpaceBuffer& operator=(SpaceBuffer&& other) noexcept;
  ~SpaceBuffer();

  // At least `bytes` bytes; earlier contents are lost when it grows.
  void reserve(std::size_t bytes);
  [[nodiscard]] std::uint8_t* data() const { return data_; }
  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  template <typename T>
  [[nodiscard]] T* as() const {
    return reinterpret_cast<T*>(data_);
  }
  // Grows to hold `host` (at least one byte) and copies it in, ordered on the space's stream.
  template <typename T>
  void assign(std::span<const T> host) {
    reserve(std::max<std::size_t>(1, host.size_bytes()));
    space_->copy_from_host(data_, host.data(), host.size_bytes());
  }
  // The first `count` elements, copied to the host once the space's queued work is done.
  template <typename T>
  [[nodiscard]] std::vector<T> to_host(std::size_t count) const {
    std::vector<T> host(count);
    space_->copy_to_host(host.data(), data_, count * sizeof(T));
    return host;
  }

 private:
  StepSpace* space_;
  std::uint8_t* data_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace pleshard
