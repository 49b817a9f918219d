// Copies from pinned host memory by the GPU's own loads (StepSpace::copy_from_pinned): every
// word of short and long copies, padding written and not read, the copy engine's path where
// the words do not line up, a step's packed slot, and a CUDA graph that captured the pull
// reading, at each launch, the buffer and runs it is given. Skips at run time when no GPU is
// present.

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "exec/cuda_graph.hpp"
#include "exec/cuda_step_space.hpp"
#include "hash/random_batches.hpp"
#include "kernels/cuda/cuda_check.hpp"
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

  // `block` of random words written at byte `offset` into a pinned buffer (its padding
  // poisoned unless `padded_source`), copied to GPU memory at `offset`, read back: the data
  // and the fills, nothing around them.
  void expect_copied(const kernels::PaddedBlock& block, std::size_t offset, bool padded_source = false) {
    const auto words = static_cast<std::size_t>(block.total_words());
    const std::size_t bytes = words * sizeof(std::uint64_t);
    HostBuffer pinned(*space_, bytes + offset + 1);
    void* device = space_->allocate(bytes + offset + 1);
    std::vector<std::uint64_t> source(words);
    std::vector<std::uint64_t> expected(words);
    std::size_t at = 0;
    for (int r = 0; r < block.runs; ++r)
      for (std::int64_t w = 0; w < block.words[r]; ++w, ++at) {
        const bool data = w < block.used[r];
        expected[at] = data ? rng_() : static_cast<std::uint64_t>(block.fill[r]);
        source[at] = data || padded_source ? expected[at] : 0xDEADBEEFDEADBEEFull;
      }
    std::memcpy(pinned.data() + offset, source.data(), bytes);
    poison(device, bytes + offset + 1);
    space_->copy_from_pinned(static_cast<std::uint8_t*>(device) + offset, pinned.data() + offset, block);
    std::vector<std::uint8_t> got(bytes + offset + 1);
    space_->copy_to_host(got.data(), device, got.size());
    space_->deallocate(device);
    std::vector<std::uint64_t> words_got(words);
    std::memcpy(words_got.data(), got.data() + offset, bytes);
    EXPECT_EQ(words_got, expected) << words << " words at offset " << offset;
    EXPECT_EQ(got.back(), 0xFF) << "the byte after the copy was written (" << words << " words)";
    for (std::size_t i = 0; i < offset; ++i) EXPECT_EQ(got[i], 0xFF) << "byte " << i << " before the copy was written";
  }

  // Bytes no copy writes: a pull that skipped zero padding would leave them.
  void poison(void* device, std::size_t bytes) {
    PLESHARD_CUDA_CHECK(cudaMemsetAsync(device, 0xFF, bytes, stream_of(*space_)));
  }

  std::unique_ptr<StepSpace> space_;
  std::mt19937_64 rng_{29};
};

TEST_F(PinnedPull, CopiesEveryWordOfDenseBlocks) {
  // One word, a short step's batch, one block's worth and more, a long step's.
  for (std::int64_t words : {1, 8, 256, 257, 260, 4100, 32769}) {
    expect_copied(kernels::PaddedBlock::dense(words), 0);
    expect_copied(kernels::PaddedBlock::dense(words), 8);
  }
  expect_copied(kernels::PaddedBlock::dense(0), 0);
}

TEST_F(PinnedPull, WritesPaddingWithoutReadingIt) {
  kernels::PaddedBlock block;
  block.runs = 3;
  const std::int64_t words[] = {300, 302, 602};
  const std::int64_t used[] = {17, 0, 602};
  const std::int64_t fill[] = {0, 300, -1};
  for (int r = 0; r < 3; ++r) {
    block.words[r] = words[r];
    block.used[r] = used[r];
    block.fill[r] = fill[r];
  }
  expect_copied(block, 0);
  expect_copied(block, 16);
  kernels::PaddedBlock malformed = block;
  malformed.used[0] = 301;
  EXPECT_THROW(kernels::pull_pinned_cuda(nullptr, nullptr, malformed, stream_of(*space_)), SystemError);
}

TEST_F(PinnedPull, CopiesWhatDoesNotLineUpThroughTheCopyEngine) {
  EXPECT_FALSE(kernels::pullable(reinterpret_cast<void*>(4), nullptr));
  EXPECT_THROW(kernels::pull_pinned_cuda(reinterpret_cast<void*>(4), nullptr, kernels::PaddedBlock::dense(1),
                                         stream_of(*space_)),
               SystemError);
  // The copy engine copies the source's padding as it is.
  for (std::int64_t words : {1, 13, 257}) expect_copied(kernels::PaddedBlock::dense(words), 3, true);
}

TEST_F(PinnedPull, CopiesAPackedSlot) {
  std::mt19937_64 rng(12);
  const ModelConfig config = testing_support::random_config(rng);
  TokenBatch batch(config.ngram_size);
  batch.add_request(std::vector<std::int64_t>{5, 6, 7}, std::vector<std::int64_t>(config.ngram_size - 1, 3));
  batch.add_request(std::vector<std::int64_t>{}, std::vector<std::int64_t>(config.ngram_size - 1, 4));
  batch.add_request(std::vector<std::int64_t>{8}, std::vector<std::int64_t>(config.ngram_size - 1, 9));
  const std::int64_t slot = 64;
  const auto entries = static_cast<std::size_t>(kernels::SlotBatchView::block_size(slot, batch.context_width));
  HostBuffer pinned(*space_, entries * sizeof(std::int64_t));
  const kernels::PaddedBlock layout = pack_slot(batch, slot, {pinned.as<std::int64_t>(), entries});
  std::vector<std::int64_t> expected(pinned.as<std::int64_t>(), pinned.as<std::int64_t>() + entries);
  void* device = space_->allocate(entries * sizeof(std::int64_t));
  poison(device, entries * sizeof(std::int64_t));
  space_->copy_from_pinned(device, pinned.data(), layout);
  std::vector<std::int64_t> got(entries);
  space_->copy_to_host(got.data(), device, entries * sizeof(std::int64_t));
  space_->deallocate(device);
  EXPECT_EQ(got, expected);
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
  const kernels::PaddedBlock dense = kernels::PaddedBlock::dense(words);
  CudaGraph graph(stream_of(*space_), [&] {
    space_->copy_from_pinned(pulled, buffers[0].data(), dense);
    space_->copy(kept, pulled, bytes);
  });
  EXPECT_THROW(graph.launch(stream_of(*space_)), SystemError);
  EXPECT_THROW(graph.launch(stream_of(*space_), buffers[1].data(), kernels::PaddedBlock::dense(words - 1)),
               SystemError);
  for (const std::size_t b : {1ul, 2ul, 0ul, 2ul}) {
    graph.launch(stream_of(*space_), buffers[b].data(), dense);
    std::vector<std::uint64_t> got(words);
    space_->copy_to_host(got.data(), kept, bytes);
    for (std::size_t w = 0; w < words; ++w) ASSERT_EQ(got[w], b * 1000003u + w) << "buffer " << b << ", word " << w;
  }
  // Other runs at each launch: the first 10 words read, the rest filled.
  kernels::PaddedBlock short_data = dense;
  short_data.used[0] = 10;
  short_data.fill[0] = 77;
  graph.launch(stream_of(*space_), buffers[1].data(), short_data);
  std::vector<std::uint64_t> got(words);
  space_->copy_to_host(got.data(), kept, bytes);
  EXPECT_EQ(got[9], 1000003u + 9);
  EXPECT_EQ(got[10], 77u);
  EXPECT_EQ(got[words - 1], 77u);
  // Launches enqueued together each read their own buffer.
  void* second = space_->allocate(bytes);
  graph.launch(stream_of(*space_), buffers[1].data(), dense);
  space_->copy(second, kept, bytes);
  graph.launch(stream_of(*space_), buffers[2].data(), dense);
  std::vector<std::uint64_t> first_got(words);
  std::vector<std::uint64_t> second_got(words);
  space_->copy_to_host(first_got.data(), second, bytes);
  space_->copy_to_host(second_got.data(), kept, bytes);
  EXPECT_EQ(first_got[7], 1000003u + 7);
  EXPECT_EQ(second_got[7], 2 * 1000003u + 7);
  for (void* p : {pulled, kept, second}) space_->deallocate(p);
}

TEST_F(PinnedPull, GraphsThatWouldReplayAStaleBufferAreRefused) {
  HostBuffer pinned(*space_, 64);
  void* device = space_->allocate(64);
  // The copy engine's copy would replay from the captured buffer.
  EXPECT_THROW(CudaGraph(stream_of(*space_),
                         [&] {
                           space_->copy_from_pinned(static_cast<std::uint8_t*>(device) + 4, pinned.data(),
                                                    kernels::PaddedBlock::dense(7));
                         }),
               SystemError);
  // A graph without a pull is given a buffer to pull from.
  CudaGraph empty(stream_of(*space_), [&] { space_->fill_zero(device, 64); });
  EXPECT_THROW(empty.launch(stream_of(*space_), pinned.data(), kernels::PaddedBlock::dense(0)), SystemError);
  space_->synchronize();
  space_->deallocate(device);
}

TEST_F(PinnedPull, GraphWithTwoPullsIsRefused) {
  HostBuffer pinned(*space_, 64);
  void* device = space_->allocate(128);
  EXPECT_THROW(CudaGraph(stream_of(*space_),
                         [&] {
                           space_->copy_from_pinned(device, pinned.data(), kernels::PaddedBlock::dense(8));
                           space_->copy_from_pinned(static_cast<std::uint8_t*>(device) + 64, pinned.data(),
                                                    kernels::PaddedBlock::dense(8));
                         }),
               SystemError);
  space_->deallocate(device);
}

}  // namespace
