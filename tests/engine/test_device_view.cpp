// A decoder shard in the same process uses a GPU step's embeddings where the engine left
// them: the views point into GPU memory, and a reader on a stream of its own, ordered after
// the step's ready event, sees the host tier's bytes. The engine's next step waits for the
// reader's event (wait_for). Skips without a GPU.

#include <gtest/gtest.h>

#include <random>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/synthetic.hpp"
#include "engine/embed.hpp"
#include "engine/ple_engine.hpp"
#include "hash/random_batches.hpp"
#if PLESHARD_HAVE_CUDA
#include "kernels/cuda/cuda_check.hpp"
#endif

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

TEST(DeviceView, ReadInPlaceOnAnotherStream) {
#if PLESHARD_HAVE_CUDA
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device";
  const ModelConfig config = small_config("nvfp4", 3);
  const auto checkpoint = synthetic_checkpoint(config, RowFormat::nvfp4, 11);
  const Communicators comms(MPI_COMM_SELF, make_topology(1, 0, 1, 1));
  EngineOptions options;
  options.tier = StorageTier::device;
  options.max_tokens = 256;
  PleEngine engine(comms, config, *checkpoint, options);
  cudaStream_t reader = nullptr;
  cudaEvent_t read = nullptr;
  PLESHARD_CUDA_CHECK(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
  PLESHARD_CUDA_CHECK(cudaEventCreateWithFlags(&read, cudaEventDisableTiming));
  std::mt19937_64 rng(9);
  for (int step = 0; step < 4; ++step) {
    const TokenBatch batch = to_batch(config, random_requests(rng, config, 6, 40));
    const StepOutput out = engine.forward(batch);
    ASSERT_TRUE(out.on_device);
    ASSERT_NE(out.ready, nullptr);
    PLESHARD_CUDA_CHECK(cudaStreamWaitEvent(reader, static_cast<cudaEvent_t>(out.ready), 0));
    const auto expected = embed_batch(config, *checkpoint, batch, OutDtype::bf16);
    for (std::size_t d = 0; d < out.layers.size(); ++d) {
      const EmbeddingView& view = out.layers[d];
      cudaPointerAttributes where{};
      PLESHARD_CUDA_CHECK(cudaPointerGetAttributes(&where, view.data));
      EXPECT_EQ(where.type, cudaMemoryTypeDevice);
      std::vector<std::uint8_t> got(view.bytes());
      PLESHARD_CUDA_CHECK(cudaMemcpyAsync(got.data(), view.data, got.size(), cudaMemcpyDeviceToHost, reader));
      PLESHARD_CUDA_CHECK(cudaStreamSynchronize(reader));
      EXPECT_EQ(got, expected[d].data) << "step " << step << " layer " << d;
    }
    PLESHARD_CUDA_CHECK(cudaEventRecord(read, reader));
    engine.wait_for(read);
  }
  engine.wait();
  cudaEventDestroy(read);
  cudaStreamDestroy(reader);
#else
  GTEST_SKIP() << "a build without CUDA";
#endif
}

}  // namespace
