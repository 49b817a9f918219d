// Copies from pinned host memory by the GPU's own loads (StepSpace::copy_from_pinned): every
// byte of short and long copies, the copy engine's path where the words do not line up, and
// a CUDA graph that captured the pull reading, at each launch, the buffer it is given.
// Skips at run time when no GPU is present.

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "exec/cuda_graph.hpp"
#include "exec/cuda_step_space.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/pinned_pull.hpp"

namespace {

using namespace pleshard;

class PinnedPull : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    space_ = make_cuda_space();
  }

  // `bytes` random bytes written at `offset` into a pinned buffer, copied to GPU memory at
  // `offset`, read back.
  void expect_copied(std::size_t bytes, std::size_t offset) {
    HostBuffer pinned(*space_, bytes + offset + 1);
    void* device = space_->allocate(bytes + offset + 1);
    std::vector<std::uint8_t> expected(bytes);
    for (auto& b : expected) b = static_cast<std::uint8_t>(rng_());
    std::memcpy(pinned.data() + offset, expected.data(), bytes);
    space_->fill_zero(device, bytes + offset + 1);
    space_->copy_from_pinned(static_cast<std::uint8_t*>(device) + offset, pinned.data() + offset, bytes);
    std::vector<std::uint8_t> got(bytes + offset + 1);
    space_->copy_to_host(got.data(), device, got.size());
    space_->deallocate(device);
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), got.begin() + static_cast<std::ptrdiff_t>(offset)))
        << bytes << " bytes at offset " << offset;
    EXPECT_EQ(got.back(), 0) << "the byte after the copy was written (" << bytes << " bytes)";
    for (std::size_t i = 0; i < offset; ++i) EXPECT_EQ(got[i], 0) << "byte " << i << " before the copy was written";
  }

  std::unique_ptr<StepSpace> space_;
  std::mt19937_64 rng_{29};
};

TEST_F(PinnedPull, CopiesEveryByteOfWholeWords) {
  // One word, a short step's batch, one block's worth and more, a long step's.
  for (std::size_t bytes : {8ul, 64ul, 2048ul, 2080ul, 8ul * 256, 8ul * 257, 32800ul, 262152ul}) {
    EXPECT_TRUE(kernels::pullable(nullptr, nullptr, bytes));
    expect_copied(bytes, 0);
    expect_copied(bytes, 8);
  }
}

TEST_F(PinnedPull, CopiesWhatDoesNotLineUpThroughTheCopyEngine) {
  EXPECT_FALSE(kernels::pullable(nullptr, nullptr, 13));
  EXPECT_FALSE(kernels::pullable(reinterpret_cast<void*>(4), nullptr, 64));
  EXPECT_THROW(kernels::pull_pinned_cuda(nullptr, nullptr, 13, stream_of(*space_)), SystemError);
  for (std::size_t bytes : {1ul, 13ul, 2047ul}) expect_copied(bytes, 0);
  expect_copied(64, 3);
  expect_copied(0, 0);
}

TEST_F(PinnedPull, GraphReadsTheBufferEachLaunchNames) {
  constexpr std::size_t words = 300;
  const std::size_t bytes = words * sizeof(std::uint64_t);
  HostBuffer buffers[3] = {HostBuffer(*space_, bytes), HostBuffer(*space_, bytes), HostBuffer(*space_, bytes)};
  for (std::size_t b = 0; b < 3; ++b)
    for (std::size_t w = 0; w < words; ++w) buffers[b].as<std::uint64_t>()[w] = b * 1000003u + w;
  void* pulled = space_->allocate(bytes);
  void* kept = space_->allocate(bytes);
  // Captured from buffer 0; a copy after it shows that the graph's later work sees the pull.
  CudaGraph graph(stream_of(*space_), [&] {
    space_->copy_from_pinned(pulled, buffers[0].data(), bytes);
    space_->copy(kept, pulled, bytes);
  });
  EXPECT_THROW(graph.launch(stream_of(*space_)), SystemError);
  for (const std::size_t b : {1ul, 2ul, 0ul, 2ul}) {
    graph.launch(stream_of(*space_), buffers[b].data());
    std::vector<std::uint64_t> got(words);
    space_->copy_to_host(got.data(), kept, bytes);
    for (std::size_t w = 0; w < words; ++w) ASSERT_EQ(got[w], b * 1000003u + w) << "buffer " << b << ", word " << w;
  }
  // Launches enqueued together each read their own buffer.
  void* second = space_->allocate(bytes);
  graph.launch(stream_of(*space_), buffers[1].data());
  space_->copy(second, kept, bytes);
  graph.launch(stream_of(*space_), buffers[2].data());
  std::vector<std::uint64_t> first_got(words);
  std::vector<std::uint64_t> second_got(words);
  space_->copy_to_host(first_got.data(), second, bytes);
  space_->copy_to_host(second_got.data(), kept, bytes);
  EXPECT_EQ(first_got[7], 1000003u + 7);
  EXPECT_EQ(second_got[7], 2 * 1000003u + 7);
  for (void* p : {pulled, kept, second}) space_->deallocate(p);
}

TEST_F(PinnedPull, GraphWithTwoPullsIsRefused) {
  HostBuffer pinned(*space_, 64);
  void* device = space_->allocate(128);
  EXPECT_THROW(CudaGraph(stream_of(*space_),
                         [&] {
                           space_->copy_from_pinned(device, pinned.data(), 64);
                           space_->copy_from_pinned(static_cast<std::uint8_t*>(device) + 64, pinned.data(), 64);
                         }),
               SystemError);
  space_->deallocate(device);
}

}  // namespace
