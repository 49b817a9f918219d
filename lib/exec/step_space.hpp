#pragma once
// Where one step's buffers live and its work is ordered: the host, or one GPU and a stream
// of its own. A space allocates memory and copies it, in the order of its stream; the
// kernels that run there are launched through exec/step_kernels.hpp. The engine, the
// exchange and the row stores are written once against it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "kernels/common/padded_block.hpp"

namespace pleshard {

class StepSpace {
 public:
  virtual ~StepSpace() = default;

  [[nodiscard]] bool on_device() const { return on_device_; }
  // The CUDA stream (a cudaStream_t) the space's work is ordered on; null on the host, whose
  // work runs when it is called.
  [[nodiscard]] void* stream() const { return stream_; }

  // Memory of the space: the GPU's, or the host's for the host space.
  [[nodiscard]] virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p) noexcept = 0;
  // Host memory the space copies to and from without staging (pinned for a GPU).
  [[nodiscard]] virtual void* allocate_host(std::size_t bytes) = 0;
  virtual void deallocate_host(void* p) noexcept = 0;

  // Ordered on the space's stream. copy_from_host has read pageable host memory when it
  // returns (host memory from allocate_host must stay untouched until the stream passes).
  virtual void fill_zero(void* p, std::size_t bytes) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_from_host(void* dst, const void* host, std::size_t bytes) = 0;
  // From host memory of allocate_host, read when the stream gets there: `block`'s words,
  // its padding held by the source too. A GPU reads only the data, with its own loads
  // (kernels/cuda/pinned_pull.hpp; a CUDA graph's pull is pointed at a buffer per launch).
  virtual void copy_from_pinned(void* dst, const void* pinned, const kernels::PaddedBlock& block) {
    copy_from_host(dst, pinned, static_cast<std::size_t>(block.total_words()) * sizeof(std::uint64_t));
  }
  // `host` holds the bytes once the stream has passed this point.
  virtual void copy_to_host_async(void* host, const void* src, std::size_t bytes) = 0;
  // Returns when the stream has passed everything enqueued. A GPU that makes no progress
  // for the stall timeout ends the job (abort_job): nothing could be freed or waited on.
  virtual void synchronize() = 0;
  // Returns when the work before `mark` is done (a GPU's event, recorded on this space's
  // stream or another of its GPU's), watched as synchronize() is. The host's work is done
  // when it returns: nothing to wait for.
  virtual void synchronize_to(void* mark) { (void)mark; }
  // Whether the stream's work is being captured into a CUDA graph (nothing runs, and what is
  // captured is replayed for other steps of the same slot size).
  [[nodiscard]] virtual bool capturing() const { return false; }
  virtual void set_stall_timeout(double seconds) { (void)seconds; }
  // Tests: a kernel that never ends on the stream, as a hung GPU or peer would stall it;
  // nothing on the host.
  virtual void inject_stall() {}
  // Tests: the stream's next work held back `seconds` (a GPU kernel that sleeps; the host
  // sleeps), as a slow decode would be.
  virtual void inject_delay(double seconds);

  // What `work` enqueues on the stream, recorded once (nothing runs) and replayed: a CUDA
  // graph. SystemError in a space that cannot record (the host's).
  class Recording {
   public:
    virtual ~Recording() = default;
    // Where the work pulled a block from pinned memory (copy_from_pinned), this launch
    // pulls `pulled` from `pulled_from` instead; a recording without a pull refuses one.
    virtual void launch(const void* pulled_from = nullptr, const kernels::PaddedBlock& pulled = {}) = 0;
    // Whether the work pulled a block from pinned memory.
    [[nodiscard]] virtual bool pulls() const = 0;
  };
  [[nodiscard]] virtual std::unique_ptr<Recording> record(const std::function<void()>& work);

  // Returns when `host` holds the bytes (waits for the stream). The stream is drained first:
  // a copy into pageable memory would block inside the runtime, out of the stall timeout's
  // reach, while the work before it runs.
  void copy_to_host(void* host, const void* src, std::size_t bytes) {
    synchronize();
    copy_to_host_async(host, src, bytes);
    synchronize();
  }

 protected:
  StepSpace(bool on_device, void* stream) : on_device_(on_device), stream_(stream) {}

 private:
  bool on_device_;
  void* stream_;
};

[[nodiscard]] std::unique_ptr<StepSpace> make_host_space();
// The current CUDA device with a stream of its own; SystemError in a build without CUDA.
[[nodiscard]] std::unique_ptr<StepSpace> make_cuda_space();

// Bytes in a space that grow on demand and never shrink, for buffers whose size only the
// data tells (a disk read's rows); steps of the engine use a pre-sized Workspace instead.
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

// Host memory of a space (pinned for a GPU), owned.
class HostBuffer {
 public:
  HostBuffer(StepSpace& space, std::size_t bytes);
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer();
  [[nodiscard]] std::uint8_t* data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return size_; }
  template <typename T>
  [[nodiscard]] T* as() const {
    return reinterpret_cast<T*>(data_);
  }

 private:
  StepSpace& space_;
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace pleshard
