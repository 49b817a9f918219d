#include "exec/cuda_step_space.hpp"

#include "kernels/cuda/cuda_check.hpp"

namespace pleshard {

namespace {

cudaStream_t new_stream() {
  cudaStream_t stream = nullptr;
  PLESHARD_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return stream;
}

class CudaSpace final : public StepSpace {
 public:
  CudaSpace() : StepSpace(true, new_stream()) {}
  ~CudaSpace() override { cudaStreamDestroy(stream_of(*this)); }
  CudaSpace(const CudaSpace&) = delete;
  CudaSpace& operator=(const CudaSpace&) = delete;

  [[nodiscard]] void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    PLESHARD_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(1, bytes)));
    return p;
  }
  void deallocate(void* p) noexcept override { cudaFree(p); }
  [[nodiscard]] void* allocate_host(std::size_t bytes) override {
    void* p = nullptr;
    PLESHARD_CUDA_CHECK(cudaMallocHost(&p, std::max<std::size_t>(1, bytes)));
    return p;
  }
  void deallocate_host(void* p) noexcept override { cudaFreeHost(p); }
  void fill_zero(void* p, std::size_t bytes) override {
    if (bytes != 0) PLESHARD_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, native()));
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes != 0) PLESHARD_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, native()));
  }
  void copy_from_host(void* dst, const void* host, std::size_t bytes) override {
    if (bytes != 0) PLESHARD_CUDA_CHECK(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, native()));
  }
  void copy_to_host_async(void* host, const void* src, std::size_t bytes) override {
    if (bytes != 0) PLESHARD_CUDA_CHECK(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, native()));
  }
  void synchronize() override { PLESHARD_CUDA_CHECK(cudaStreamSynchronize(native())); }

 private:
  [[nodiscard]] cudaStream_t native() const { return stream_of(*this); }
};

}  // namespace

std::unique_ptr<StepSpace> make_cuda_space() { return std::make_unique<CudaSpace>(); }

}  // namespace pleshard
