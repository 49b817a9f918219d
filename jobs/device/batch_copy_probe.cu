// How a short step's batch best reaches the GPU, measured as the step runner runs: an event,
// the host packing the batch into one of two pinned buffers, its copy, a CUDA graph of one
// kernel of 43 blocks that runs 4 µs, an event; two steps in flight. Latency is the time
// between the events, p50 and p99 over 10,000 steps, for:
//   the copy engine (cudaMemcpyAsync) before the graph, 64 B to 8 KB;
//   a kernel pulling the buffer through UVA as the graph's first node (one graph per buffer);
//   the batch as the kernel's parameters, set in the graph before each launch, and launched
//   without a graph.
// Build and run on a GPU machine: nvcc -O2 -arch=sm_90 -o /tmp/probe jobs/device/batch_copy_probe.cu && /tmp/probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "probe_check.cuh"

namespace {

constexpr int k_blocks = 43;  // a 64-token step's decode of Qwen3.8-Flash-Next's FP8 rows
constexpr int k_steps = 10000;

__global__ void spin(const long long* in, long long* out, long long cycles) {
  const long long t0 = clock64();
  const long long s = in[threadIdx.x % 8];
  while (clock64() - t0 < cycles) {
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

__global__ void pull(const long long* __restrict__ host, long long* __restrict__ dev, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) dev[i] = host[i];
}

struct Batch {
  long long v[1024];  // 8 KB of parameters
};

__global__ void spin_on(const __grid_constant__ Batch b, long long* out, long long cycles) {
  const long long t0 = clock64();
  const long long s = b.v[threadIdx.x % 8];
  while (clock64() - t0 < cycles) {
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

// What `work` enqueues on `stream`, as an instantiated graph; `first`, if given, receives
// the graph's first node.
template <typename Work>
cudaGraphExec_t instantiate(cudaStream_t stream, Work&& work, cudaGraphNode_t* first = nullptr) {
  cudaGraph_t graph;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  work();
  CHECK(cudaStreamEndCapture(stream, &graph));
  if (first != nullptr) {
    std::size_t count = 1;
    CHECK(cudaGraphGetRootNodes(graph, first, &count));
  }
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  return exec;  // the graph itself lives on with the process: `first` stays valid
}

struct Probe {
  cudaStream_t stream;
  long long cycles;
  long long* dev_in;
  long long* dev_out;
  long long* host[2];
  long long* mapped[2];
  std::vector<long long> batch = std::vector<long long>(1 << 17, 7);
  cudaEvent_t events[2][2];

  template <typename Submit>
  void measure(const char* what, std::size_t bytes, Submit&& submit) {
    std::vector<float> latency;
    for (int k = 0; k < k_steps + 2; ++k) {
      const int s = k % 2;
      if (k >= 2) {
        while (cudaEventQuery(events[s][1]) == cudaErrorNotReady) std::this_thread::yield();
        float ms;
        CHECK(cudaEventElapsedTime(&ms, events[s][0], events[s][1]));
        latency.push_back(ms * 1000);
      }
      if (k >= k_steps) continue;
      CHECK(cudaEventRecord(events[s][0], stream));
      std::memset(host[s], 0, bytes);
      std::memcpy(host[s], batch.data(), bytes / 2);
      submit(s);
      CHECK(cudaEventRecord(events[s][1], stream));
    }
    CHECK(cudaStreamSynchronize(stream));
    latency.erase(latency.begin(), latency.begin() + 500);
    std::sort(latency.begin(), latency.end());
    std::printf("%-38s %5zu B: p50 %6.2f us  p99 %6.2f us\n", what, bytes, latency[latency.size() / 2],
                latency[latency.size() * 99 / 100]);
  }
};

}  // namespace

int main() {
  Probe p;
  CHECK(cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking));
  int khz = 0;
  CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  p.cycles = static_cast<long long>(4.0 * khz / 1000.0);
  CHECK(cudaMalloc(&p.dev_in, 1 << 20));
  CHECK(cudaMalloc(&p.dev_out, 1 << 20));
  for (int b = 0; b < 2; ++b) {
    CHECK(cudaHostAlloc(&p.host[b], 1 << 20, cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&p.mapped[b]), p.host[b], 0));
  }
  for (auto& pair : p.events)
    for (auto& e : pair) CHECK(cudaEventCreate(&e));
  const auto run_kernel = [&] { spin<<<k_blocks, 256, 0, p.stream>>>(p.dev_in, p.dev_out, p.cycles); };

  const cudaGraphExec_t kernel = instantiate(p.stream, run_kernel);
  p.measure("graph of the kernel alone", 0, [&](int) { CHECK(cudaGraphLaunch(kernel, p.stream)); });
  for (std::size_t bytes : {64ul, 128ul, 256ul, 512ul, 1024ul, 2048ul, 4096ul, 8192ul})
    p.measure("copy engine, then the graph", bytes, [&](int s) {
      CHECK(cudaMemcpyAsync(p.dev_in, p.host[s], bytes, cudaMemcpyHostToDevice, p.stream));
      CHECK(cudaGraphLaunch(kernel, p.stream));
    });
  for (std::size_t bytes : {64ul, 2048ul, 8192ul}) {
    cudaGraphExec_t graphs[2];
    for (int b = 0; b < 2; ++b)
      graphs[b] = instantiate(p.stream, [&] {
        pull<<<1, 256, 0, p.stream>>>(p.mapped[b], p.dev_in, static_cast<int>(bytes / 8));
        run_kernel();
      });
    p.measure("graph of a pull and the kernel", bytes, [&](int s) { CHECK(cudaGraphLaunch(graphs[s], p.stream)); });
  }
  Batch batch{};
  cudaGraphNode_t node;
  const cudaGraphExec_t exec = instantiate(
      p.stream, [&] { spin_on<<<k_blocks, 256, 0, p.stream>>>(batch, p.dev_out, p.cycles); }, &node);
  cudaKernelNodeParams params;
  CHECK(cudaGraphKernelNodeGetParams(node, &params));
  for (std::size_t bytes : {64ul, 2048ul, 8192ul}) {
    p.measure("graph, batch as parameters set a launch", bytes, [&](int s) {
      std::memcpy(batch.v, p.host[s], bytes);
      long long* out = p.dev_out;
      long long cycles = p.cycles;
      void* args[] = {&batch, &out, &cycles};
      params.kernelParams = args;
      CHECK(cudaGraphExecKernelNodeSetParams(exec, node, &params));
      CHECK(cudaGraphLaunch(exec, p.stream));
    });
    p.measure("launch, batch as parameters", bytes, [&](int s) {
      std::memcpy(batch.v, p.host[s], bytes);
      spin_on<<<k_blocks, 256, 0, p.stream>>>(batch, p.dev_out, p.cycles);
    });
  }
  return 0;
}
