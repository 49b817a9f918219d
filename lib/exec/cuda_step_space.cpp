#include "exec/cuda_step_space.hpp"

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/lookup_cuda.hpp"
#include "kernels/cuda/ngram_ids_cuda.hpp"

namespace pleshard {

namespace {

class CudaSpace final : public StepSpace {
 public:
  CudaSpace() { PLESHARD_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~CudaSpace() override { cudaStreamDestroy(stream_); }
  CudaSpace(const CudaSpace&) = delete;
  CudaSpace& operator=(const CudaSpace&) = delete;

  [[nodiscard]] cudaStream_t stream() const { return stream_; }
  [[nodiscard]] bool on_device() const override { return true; }
  [[nodiscard]] void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    PLESHARD_CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
  }
  void deallocate(void* p) noexcept override { cudaFree(p); }
  void fill_zero(void* p, std::size_t bytes) override {
    if (bytes != 0) PLESHARD_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream_));
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes != 0) PLESHARD_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
  }
  void copy_from_host(void* dst, const void* host, std::size_t bytes) override {
    if (bytes != 0) PLESHARD_CUDA_CHECK(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, stream_));
  }
  void copy_to_host(void* host, const void* src, std::size_t bytes) override {
    if (bytes != 0) PLESHARD_CUDA_CHECK(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, stream_));
    synchronize();
  }
  void synchronize() override { PLESHARD_CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  void hash(const kernels::NgramHashParams& params, const kernels::NgramBatchView& batch,
            std::int64_t* ids) override {
    kernels::compute_ngram_ids_cuda(params, batch, ids, stream_);
  }
  void decode_rows(const kernels::TableView& table, const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype,
                   void* out) override {
    kernels::lookup_rows_cuda(table, ids, num_ids, dtype, out, stream_);
  }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace

std::unique_ptr<StepSpace> make_cuda_space() { return std::make_unique<CudaSpace>(); }

cudaStream_t stream_of(const StepSpace& space) {
  const auto* cuda = dynamic_cast<const CudaSpace*>(&space);
  if (cuda == nullptr) throw SystemError("stream_of: not a CUDA step space");
  return cuda->stream();
}

}  // namespace pleshard
