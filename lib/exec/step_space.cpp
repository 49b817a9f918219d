#include "exec/step_space.hpp"

#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

#include "core/error.hpp"

namespace pleshard {

namespace {

class HostSpace final : public StepSpace {
 public:
  HostSpace() : StepSpace(false, nullptr) {}
  [[nodiscard]] void* allocate(std::size_t bytes) override { return ::operator new(std::max<std::size_t>(1, bytes)); }
  void deallocate(void* p) noexcept override { ::operator delete(p); }
  [[nodiscard]] void* allocate_host(std::size_t bytes) override { return allocate(bytes); }
  void deallocate_host(void* p) noexcept override { deallocate(p); }
  void fill_zero(void* p, std::size_t bytes) override {
    if (bytes != 0) std::memset(p, 0, bytes);
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes != 0) std::memmove(dst, src, bytes);
  }
  void copy_from_host(void* dst, const void* host, std::size_t bytes) override { copy(dst, host, bytes); }
  void copy_to_host_async(void* host, const void* src, std::size_t bytes) override { copy(host, src, bytes); }
  void synchronize() override {}
};

}  // namespace

std::unique_ptr<StepSpace> make_host_space() { return std::make_unique<HostSpace>(); }

#if !PLESHARD_HAVE_CUDA
std::unique_ptr<StepSpace> make_cuda_space() {
  throw SystemError("a GPU step space: this build has no CUDA (rebuild where nvcc is found)");
}
#endif

void StepSpace::inject_delay(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

std::unique_ptr<StepSpace::Recording> StepSpace::record(const std::function<void()>& /*work*/) {
  throw SystemError("CUDA graphs record GPU work; this step space is the host's");
}

SpaceBuffer::SpaceBuffer(SpaceBuffer&& other) noexcept
    : space_(other.space_), data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

SpaceBuffer& SpaceBuffer::operator=(SpaceBuffer&& other) noexcept {
  std::swap(space_, other.space_);
  std::swap(data_, other.data_);
  std::swap(capacity_, other.capacity_);
  return *this;
}

SpaceBuffer::~SpaceBuffer() {
  if (data_ != nullptr) space_->deallocate(data_);
}

void SpaceBuffer::reserve(std::size_t bytes) {
  if (bytes <= capacity_) return;
  // The stream may still use the old bytes.
  space_->synchronize();
  if (data_ != nullptr) space_->deallocate(std::exchange(data_, nullptr));
  capacity_ = 0;
  data_ = static_cast<std::uint8_t*>(space_->allocate(bytes));
  capacity_ = bytes;
}

HostBuffer::HostBuffer(StepSpace& space, std::size_t bytes)
    : space_(space), data_(static_cast<std::uint8_t*>(space.allocate_host(bytes))), size_(bytes) {}

HostBuffer::~HostBuffer() { space_.deallocate_host(data_); }

}  // namespace pleshard
