#include "exec/cuda_step_space.hpp"

#include <chrono>
#include <string>
#include <thread>

#include "core/collective.hpp"
#include "exec/cuda_graph.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/fault.hpp"
#include "kernels/cuda/pinned_pull.hpp"

namespace pleshard {

namespace {

cudaStream_t new_stream() {
  cudaStream_t stream = nullptr;
  PLESHARD_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return stream;
}

// A recording is a CUDA graph of the space's stream.
class GraphRecording final : public StepSpace::Recording {
 public:
  GraphRecording(cudaStream_t stream, const std::function<void()>& work) : stream_(stream), graph_(stream, work) {}
  void launch(const void* pulled_from, const kernels::PaddedBlock& pulled) override {
    graph_.launch(stream_, pulled_from, pulled);
  }
  [[nodiscard]] bool pulls() const override { return graph_.pulls(); }

 private:
  cudaStream_t stream_;
  CudaGraph graph_;
};

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
  void copy_from_pinned(void* dst, const void* pinned, const kernels::PaddedBlock& block) override {
    if (kernels::pullable(dst, pinned)) {
      kernels::pull_pinned_cuda(dst, pinned, block, native());
      return;
    }
    // A graph replays a copy engine's copy from the buffer it captured, whatever it is given.
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    PLESHARD_CUDA_CHECK(cudaStreamIsCapturing(native(), &capturing));
    if (capturing != cudaStreamCaptureStatusNone)
      throw SystemError("copy_from_pinned: a CUDA graph can copy only 8-byte words from pinned memory");
    StepSpace::copy_from_pinned(dst, pinned, block);
  }
  void copy_to_host_async(void* host, const void* src, std::size_t bytes) override {
    if (bytes != 0) PLESHARD_CUDA_CHECK(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, native()));
  }
  [[nodiscard]] bool capturing() const override {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    PLESHARD_CUDA_CHECK(cudaStreamIsCapturing(native(), &status));
    return status != cudaStreamCaptureStatusNone;
  }

  void synchronize() override {
    watch([this] { return cudaStreamQuery(native()); });
  }
  void synchronize_to(void* mark) override {
    watch([mark] { return cudaEventQuery(static_cast<cudaEvent_t>(mark)); });
  }
  void set_stall_timeout(double seconds) override { stall_timeout_ = seconds; }
  void inject_stall() override { kernels::stall_stream_cuda(native()); }
  void inject_delay(double seconds) override { kernels::delay_stream_cuda(native(), seconds); }
  [[nodiscard]] std::unique_ptr<Recording> record(const std::function<void()>& work) override {
    return std::make_unique<GraphRecording>(native(), work);
  }

 private:
  [[nodiscard]] cudaStream_t native() const { return stream_of(*this); }
  // Polls `query` until it says done; a GPU that makes no progress for the stall timeout
  // ends the job.
  template <typename Query>
  void watch(const Query& query) const {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      const cudaError_t state = query();
      if (state == cudaSuccess) return;
      if (state != cudaErrorNotReady) PLESHARD_CUDA_CHECK(state);
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > stall_timeout_)
        abort_job("the GPU stream made no progress in " + std::to_string(static_cast<int>(stall_timeout_)) +
                  " s (a stalled kernel, or a peer rank stalled or failed)");
      std::this_thread::yield();
    }
  }

  double stall_timeout_ = 600;
};

}  // namespace

std::unique_ptr<StepSpace> make_cuda_space() { return std::make_unique<CudaSpace>(); }

}  // namespace pleshard
