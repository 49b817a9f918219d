// The host kernel against the scalar reference on thousands of random batches, and
// chunked processing against whole processing.

#include <gtest/gtest.h>

#include <random>

#include "core/error.hpp"
#include "hash/ngram_ids.hpp"
#include "hash/random_batches.hpp"
#include "model/table_spec.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

TEST(NgramIds, MatchTheReferenceOnRandomBatches) {
  std::mt19937_64 rng(20261129);
  int cases = 0;
  for (int model = 0; model < 60; ++model) {
    const ModelConfig config = random_config(rng);
    const auto specs = derive_table_specs(config);
    for (int d = 0; d < config.num_ple_layers(); ++d) {
      const auto layout = reference::layer_layout(config, d);
      ASSERT_EQ(specs[d].head_sizes, layout.head_sizes);
      for (int b = 0; b < 10; ++b, ++cases) {
        const auto requests = random_requests(rng, config, 12, 40);
        const auto expected = flatten(
            reference::ngram_ids(layout, config.ngram_size, config.heads_per_ngram, config.eos_token_id, requests));
        const auto ids = compute_ngram_ids(specs[d], to_batch(config, requests));
        ASSERT_EQ(ids, expected) << "model " << model << " layer " << d << " batch " << b << " N=" << config.ngram_size
                                 << " K=" << config.heads_per_ngram;
      }
    }
  }
  EXPECT_EQ(cases, 2400);
}

TEST(NgramIds, EosInTheContextHidesOlderTokens) {
  std::mt19937_64 rng(7);
  ModelConfig config = random_config(rng);
  config.ngram_size = 4;
  config.heads_per_ngram = 2;
  config.ple_embed_dim = 16 * config.total_heads();
  const auto spec = derive_table_spec(config, 0);
  const std::int64_t eos = config.eos_token_id;
  // Context (a, EOS, b): for the first token, everything older than the EOS is EOS.
  TokenBatch with_a(config.ngram_size), with_c(config.ngram_size);
  const std::vector<std::int64_t> token{5};
  with_a.add_request(token, std::vector<std::int64_t>{11, eos, 13});
  with_c.add_request(token, std::vector<std::int64_t>{17, eos, 13});
  EXPECT_EQ(compute_ngram_ids(spec, with_a), compute_ngram_ids(spec, with_c));
  TokenBatch explicit_eos(config.ngram_size);
  explicit_eos.add_request(token, std::vector<std::int64_t>{eos, eos, 13});
  EXPECT_EQ(compute_ngram_ids(spec, with_a), compute_ngram_ids(spec, explicit_eos));
}

// A fresh request hashes as if N-1 EOS tokens came before it (docs/design.md §2), whether its
// context holds them or marks the positions as before the request.
TEST(NgramIds, AFreshContextIsAllEos) {
  std::mt19937_64 rng(8);
  for (int model = 0; model < 20; ++model) {
    const ModelConfig config = random_config(rng);
    const auto spec = derive_table_spec(config, 0);
    for (const auto& request : random_requests(rng, config, 4, 30)) {
      TokenBatch fresh(config.ngram_size), eos(config.ngram_size);
      fresh.add_request(request.tokens, fresh_context(config.ngram_size));
      eos.add_request(request.tokens,
                      std::vector<std::int64_t>(static_cast<std::size_t>(config.ngram_size - 1), config.eos_token_id));
      ASSERT_EQ(compute_ngram_ids(spec, fresh), compute_ngram_ids(spec, eos));
    }
  }
}

TEST(NgramIds, ChunkedProcessingEqualsWhole) {
  std::mt19937_64 rng(99);
  for (int model = 0; model < 40; ++model) {
    const ModelConfig config = random_config(rng);
    const auto spec = derive_table_spec(config, static_cast<int>(rng() % 4));
    const auto requests = random_requests(rng, config, 6, 200);
    const auto whole = compute_ngram_ids(spec, to_batch(config, requests));

    // Each request in random chunks, its context carried from chunk to chunk.
    std::vector<std::int64_t> chunked;
    for (const auto& request : requests) {
      std::vector<std::int64_t> context = request.context;
      std::size_t done = 0;
      while (done < request.tokens.size()) {
        const std::size_t take = std::min<std::size_t>(1 + rng() % 50, request.tokens.size() - done);
        const std::span<const std::int64_t> chunk(request.tokens.data() + done, take);
        TokenBatch step(config.ngram_size);
        step.add_request(chunk, context);
        const auto ids = compute_ngram_ids(spec, step);
        chunked.insert(chunked.end(), ids.begin(), ids.end());
        advance_context(context, chunk);
        done += take;
      }
    }
    ASSERT_EQ(chunked, whole) << "model " << model;
  }
}

TEST(NgramIds, EmptyBatchGivesNoRows) {
  std::mt19937_64 rng(1);
  const ModelConfig config = random_config(rng);
  TokenBatch batch(config.ngram_size);
  EXPECT_TRUE(compute_ngram_ids(derive_table_spec(config, 0), batch).empty());
}

// A packed slot is its layout's data and padding: a copy that reads only each run's data
// and writes the run's fill for the rest (the GPU's pull) gives the whole block.
TEST(PackSlot, IsItsLayoutsDataAndPadding) {
  std::mt19937_64 rng(20261204);
  for (int model = 0; model < 40; ++model) {
    const ModelConfig config = random_config(rng);
    for (int b = 0; b < 10; ++b) {
      TokenBatch batch(config.ngram_size);
      const auto requests = static_cast<int>(rng() % 6);
      for (int r = 0; r < requests; ++r) {
        std::vector<std::int64_t> tokens(rng() % 3 == 0 ? 0 : rng() % 9);  // empty ones too
        for (auto& t : tokens) t = random_token(rng, config);
        std::vector<std::int64_t> context(static_cast<std::size_t>(config.ngram_size - 1));
        for (auto& t : context) t = random_token(rng, config);
        batch.add_request(tokens, context);
      }
      for (const std::int64_t slot :
           {std::max<std::int64_t>(1, batch.num_tokens()), batch.num_tokens() + 1, 2 * batch.num_tokens() + 5}) {
        const auto size = static_cast<std::size_t>(kernels::SlotBatchView::block_size(slot, batch.context_width));
        std::vector<std::int64_t> packed(size, 0x5A5A5A5A5A5A5A5Aull);
        const kernels::PaddedBlock layout = pack_slot(batch, slot, packed);
        ASSERT_TRUE(layout.valid());
        ASSERT_EQ(layout.total_words(), static_cast<std::int64_t>(size));
        std::vector<std::int64_t> pulled(size);
        std::size_t at = 0;
        for (int r = 0; r < layout.runs; ++r) {
          for (std::int64_t w = 0; w < layout.words[r]; ++w, ++at)
            pulled[at] = w < layout.used[r] ? packed[at] : layout.fill[r];
        }
        ASSERT_EQ(pulled, packed) << "model " << model << ", batch " << b << ", slot " << slot;
        // The block itself, written out from the batch: its tokens then zeros; the starts
        // of its non-empty requests, the padding request's start, then the slot's end; their
        // contexts then zeros.
        std::vector<std::int64_t> expected(batch.tokens);
        expected.resize(static_cast<std::size_t>(slot), 0);
        std::vector<std::int64_t> contexts;
        for (std::int64_t r = 0; r < batch.num_requests(); ++r) {
          const auto begin = batch.query_start_loc[static_cast<std::size_t>(r)];
          if (batch.query_start_loc[static_cast<std::size_t>(r) + 1] == begin) continue;
          expected.push_back(begin);
          for (int k = 0; k < batch.context_width; ++k)
            contexts.push_back(batch.context[static_cast<std::size_t>(r * batch.context_width + k)]);
        }
        expected.push_back(batch.num_tokens());
        expected.resize(static_cast<std::size_t>(2 * slot + 2), slot);
        expected.insert(expected.end(), contexts.begin(), contexts.end());
        expected.resize(size, 0);
        ASSERT_EQ(packed, expected) << "model " << model << ", batch " << b << ", slot " << slot;
      }
    }
  }
}

TEST(AdvanceContext, KeepsTheLastTokens) {
  std::vector<std::int64_t> context{1, 2, 3};
  advance_context(context, std::vector<std::int64_t>{4});
  EXPECT_EQ(context, (std::vector<std::int64_t>{2, 3, 4}));
  advance_context(context, std::vector<std::int64_t>{5, 6, 7, 8});
  EXPECT_EQ(context, (std::vector<std::int64_t>{6, 7, 8}));
  advance_context(context, std::vector<std::int64_t>{});
  EXPECT_EQ(context, (std::vector<std::int64_t>{6, 7, 8}));
}

TEST(ValidateBatch, RejectsInconsistentLayouts) {
  TokenBatch batch(3);
  batch.add_request(std::vector<std::int64_t>{1, 2}, std::vector<std::int64_t>{0, 0});
  EXPECT_NO_THROW(validate_batch(batch, "b"));
  TokenBatch bad = batch;
  bad.query_start_loc.back() = 5;
  EXPECT_THROW(validate_batch(bad, "b"), InputError);
  bad = batch;
  bad.context.pop_back();
  EXPECT_THROW(validate_batch(bad, "b"), InputError);
  EXPECT_THROW(batch.add_request(std::vector<std::int64_t>{1}, std::vector<std::int64_t>{0}), InputError);
}

}  // namespace
