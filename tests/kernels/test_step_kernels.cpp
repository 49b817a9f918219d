// The step kernels as the engine launches them (exec/step_kernels.hpp), on the host space
// and, where there is a GPU, the CUDA space:
// - the fused decode of a step against the shared decode core, entry by entry, on random
//   stored bytes (every code but E4M3's NaN): every format,
//   mixed formats across layers, rows that do and do not split into aligned chunks, block
//   scales (NVFP4, FP8-E8M0) in a plane of their own, after each row's codes padded to 16
//   bytes, or packed right after them, owned and foreign keys, empty tasks,
//   every output dtype, up to k_max_step_layers tasks in one launch, a task longer than one
//   pass of the grid;
// - the slot hash of every layer against the reference hashing of each slot's batch alone,
//   (the spec's scalar reference), slots of several sizes with empty requests and padding,
//   and its tally of ids (kernels::IdTally) against a count of them;
// - the owner's widening of the ids asked of it, and its tally;
// the host kernels on one thread and spread over three.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "exec/step_kernels.hpp"
#include "exec/step_space.hpp"
#if PLESHARD_HAVE_CUDA
#include "exec/cuda_graph.hpp"
#include "exec/cuda_step_space.hpp"
#include "kernels/cuda/lookup_cuda.hpp"
#endif
#include "hash/random_batches.hpp"
#include "model/table_spec.hpp"
#include "store/row_store_factory.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

std::vector<std::unique_ptr<StepSpace>> spaces() {
  std::vector<std::unique_ptr<StepSpace>> out;
  out.push_back(make_host_space());
  if (gpu_available()) out.push_back(make_tier_space(StorageTier::device));
  return out;
}

// A space and the threads its host kernels spread over: one, and three as --threads 3
// gives them where Kokkos is Serial (kernel_threads.hpp) — the same bytes either way.
struct SpaceCase {
  std::unique_ptr<StepSpace> space;
  std::size_t threads = 1;
};

// A tally's bounds of one layer of `rows` rows (kernels::IdTally): a random copy and a random
// part, each empty, whole or in between.
void random_tally_bounds(std::mt19937_64& rng, std::int64_t rows, std::vector<std::int64_t>& bounds) {
  for (int range = 0; range < 2; ++range) {
    const auto a = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows + 1));
    const auto b = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows + 1));
    bounds.insert(bounds.end(), {std::min(a, b), std::max(a, b)});
  }
}

// Whether an id of layer d counts, written out from IdTally's words: inside the copy,
// outside the part.
bool tallied(const std::vector<std::int64_t>& bounds, int d, std::int64_t id) {
  const auto at = [&](int k) { return bounds[static_cast<std::size_t>(4 * d + k)]; };
  const bool in_copy = at(0) <= id && id < at(1);
  const bool in_part = at(2) <= id && id < at(3);
  return in_copy && !in_part;
}

std::vector<SpaceCase> space_cases() {
  std::vector<SpaceCase> out;
  for (auto& space : spaces()) {
    if (!space->on_device()) out.push_back({make_host_space(), 3});
    out.push_back({std::move(space), 1});
  }
  return out;
}

// Sets the host kernels' threads for a scope.
class KernelThreads {
 public:
  explicit KernelThreads(std::size_t threads) : before_(host_threads()) { set_host_threads(threads); }
  ~KernelThreads() { set_host_threads(before_); }
  KernelThreads(const KernelThreads&) = delete;
  KernelThreads& operator=(const KernelThreads&) = delete;

 private:
  std::size_t before_;
};

// Where a table of a block-scaled format keeps its scales: a plane of their own (host tier,
// disk staging), after each row's codes in a row padded to 16 bytes (GPU tiers), or right
// after them (packed rows: the owner exchange, the row cache).
enum class ScalesAt { plane, padded, packed };

// A packed block's words with its padding replaced by `poison`: what a copy that reads only
// the data (and writes the padding itself) must not see.
std::vector<std::int64_t> padding_poisoned(std::vector<std::int64_t> words, const kernels::PaddedBlock& layout,
                                           std::int64_t poison) {
  std::size_t at = 0;
  for (int r = 0; r < layout.runs; ++r)
    for (std::int64_t w = 0; w < layout.words[r]; ++w, ++at)
      if (w >= layout.used[r]) words[at] = poison;
  return words;
}

// One table of random stored bytes (every code, NaN patterns included) in a space.
struct RandomTable {
  RandomTable(StepSpace& space, std::mt19937_64& rng, RowFormat format, int head_dim, std::int64_t rows,
              std::int64_t row_begin, ScalesAt scales_at)
      : bytes(space) {
    const std::size_t row_bytes = kernels::stored_row_bytes(format, head_dim);
    const std::size_t scale_bytes = kernels::scale_row_bytes(format, head_dim);
    const bool after_codes = scales_at != ScalesAt::plane && scale_bytes != 0;
    pitch = !after_codes                    ? row_bytes
            : scales_at == ScalesAt::padded ? (row_bytes + scale_bytes + 15) / 16 * 16
                                            : row_bytes + scale_bytes;
    const std::size_t rows_part = static_cast<std::size_t>(rows) * pitch;
    host.resize(rows_part + (after_codes ? 0 : static_cast<std::size_t>(rows) * scale_bytes));
    for (auto& b : host) b = static_cast<std::uint8_t>(rng());
    // E4M3 NaN codes (S.1111.111) and the E8M0 NaN scale (0xFF), which no encoder writes,
    // decode to a NaN whose bits the GPU's arithmetic canonicalizes: every other code is
    // compared bit for bit (E8M0's subnormal 2^-127 and products past float32's range too).
    if (format == RowFormat::fp8 || kernels::block_scaling(format).scaled())
      for (auto& b : host)
        if ((b & 0x7F) == 0x7F) b ^= 1;
    bytes.assign(std::span<const std::uint8_t>(host));
    const float global = kernels::has_global_scale(format) ? 0.37f : 1.0f;
    view = {format, head_dim, row_begin, row_begin + rows, bytes.data(), nullptr, global};
    host_view = view;
    host_view.rows = host.data();
    if (scale_bytes != 0) {
      const std::size_t scales = after_codes ? row_bytes : rows_part;
      view.block_scales = bytes.data() + scales;
      host_view.block_scales = host.data() + scales;
      if (after_codes) view.row_pitch = view.scale_pitch = host_view.row_pitch = host_view.scale_pitch = pitch;
    }
  }
  std::vector<std::uint8_t> host;
  SpaceBuffer bytes;
  std::size_t pitch = 0;
  kernels::TableView view;
  kernels::TableView host_view;
};

TEST(StepKernels, FusedDecodeEqualsTheDecodeCore) {
  std::mt19937_64 rng(2718);
  struct Layer {
    RowFormat format;
    int head_dim;
    ScalesAt scales_at;
  };
  constexpr ScalesAt plane = ScalesAt::plane;
  constexpr ScalesAt padded = ScalesAt::padded;
  constexpr ScalesAt packed = ScalesAt::packed;
  // Mixed formats in one step; bf16 rows of 20 values (40 bytes), f32 rows of 6 and packed
  // FP8-E8M0 rows of 32 values (33 bytes) take the unaligned path. The last steps launch the
  // decode compiled for FP8-E8M0 alone, and for the E4M3 table without NVFP4's products.
  const std::vector<std::vector<Layer>> steps = {
      {{RowFormat::bf16, 160, plane},
       {RowFormat::fp8, 160, plane},
       {RowFormat::nvfp4, 160, padded},
       {RowFormat::fp8_e8m0, 160, padded}},
      {{RowFormat::nvfp4, 32, plane},
       {RowFormat::f16, 48, plane},
       {RowFormat::f32, 16, plane},
       {RowFormat::bf16, 20, plane},
       {RowFormat::fp8, 48, plane},
       {RowFormat::fp8_e8m0, 32, packed},
       {RowFormat::fp8_e8m0, 64, plane}},
      {{RowFormat::f32, 6, plane},
       {RowFormat::nvfp4, 48, padded},
       {RowFormat::fp8, 16, plane},
       {RowFormat::bf16, 32, plane},
       {RowFormat::nvfp4, 16, plane},
       {RowFormat::f16, 160, plane},
       {RowFormat::bf16, 160, plane},
       {RowFormat::fp8, 160, plane}},
      {{RowFormat::fp8_e8m0, 256, packed}, {RowFormat::fp8_e8m0, 96, plane}, {RowFormat::fp8_e8m0, 32, padded}},
      {{RowFormat::fp8_e8m0, 32, padded}, {RowFormat::fp8, 48, plane}, {RowFormat::bf16, 20, plane}},
  };
  for (const auto& [space, threads] : space_cases()) {
    const KernelThreads kernel_threads(threads);
    for (std::size_t s = 0; s < steps.size(); ++s) {
      for (const OutDtype dtype : {OutDtype::f32, OutDtype::bf16, OutDtype::f16}) {
        SCOPED_TRACE("step " + std::to_string(s) + (space->on_device() ? " cuda " : " host ") + to_string(dtype) +
                     ", kernel threads " + std::to_string(threads));
        std::vector<std::unique_ptr<RandomTable>> tables;
        std::vector<SpaceBuffer> keys, outs;
        std::vector<std::vector<std::int64_t>> host_keys;
        std::vector<kernels::DecodeTask> tasks;
        for (std::size_t d = 0; d < steps[s].size(); ++d) {
          const Layer& layer = steps[s][d];
          const std::int64_t rows = 50 + static_cast<std::int64_t>(rng() % 200);
          const std::int64_t begin = static_cast<std::int64_t>(rng() % 1000);
          tables.push_back(
              std::make_unique<RandomTable>(*space, rng, layer.format, layer.head_dim, rows, begin, layer.scales_at));
          // Every third task of step 2 is empty; keys own or miss the table's rows.
          const std::size_t count = s == 2 && d % 3 == 2 ? 0 : 1 + rng() % 3000;
          std::vector<std::int64_t> k(count);
          for (auto& key : k)
            key = rng() % 5 == 0 ? static_cast<std::int64_t>(rng() % 3000) - 1000
                                 : begin + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows));
          host_keys.push_back(k);
          keys.emplace_back(*space);
          keys.back().assign(std::span<const std::int64_t>(k));
          outs.emplace_back(*space);
          outs.back().reserve(std::max<std::size_t>(1, count * static_cast<std::size_t>(layer.head_dim) * 4));
          space->fill_zero(outs.back().data(), outs.back().capacity());
          tasks.push_back({tables.back()->view, keys.back().as<std::int64_t>(), static_cast<std::int64_t>(count),
                           outs.back().data()});
        }
        decode_step(*space, tasks, dtype);
        for (std::size_t d = 0; d < tasks.size(); ++d) {
          const int dim = steps[s][d].head_dim;
          const std::size_t row_out = static_cast<std::size_t>(dim) * kernels::out_bytes(dtype);
          const auto got = outs[d].to_host<std::uint8_t>(host_keys[d].size() * row_out);
          std::vector<std::uint8_t> expected(row_out);
          std::int64_t wrong = 0;
          for (std::size_t i = 0; i < host_keys[d].size(); ++i) {
            kernels::decode_row(tables[d]->host_view, host_keys[d][i], dtype, expected.data(), 0);
            wrong += std::memcmp(expected.data(), got.data() + i * row_out, row_out) != 0 ? 1 : 0;
          }
          EXPECT_EQ(wrong, 0) << "layer " << d << " (" << to_string(steps[s][d].format) << ", " << dim << " values)";
        }
      }
    }
  }
}

TEST(StepKernels, FusedDecodeTakesAtMostTheStepLayers) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device (the host decode takes any number)";
  const auto space = make_tier_space(StorageTier::device);
  std::vector<kernels::DecodeTask> tasks(kernels::k_max_step_layers + 1);
  EXPECT_THROW(decode_step(*space, tasks, OutDtype::bf16), SystemError);
}

// A task longer than one pass of the capped grid (65,536 blocks of 8 warps, each warp's lanes
// holding two rows of 256 values at a time), beside a short one: every row is decoded once,
// wherever the grid-stride loop leaves it.
TEST(StepKernels, FusedDecodeCoversTasksLongerThanTheGrid) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device (the host decode has no grid)";
  const auto space = make_tier_space(StorageTier::device);
  std::mt19937_64 rng(31337);
  const RandomTable table(*space, rng, RowFormat::fp8_e8m0, 256, 4096, 100, ScalesAt::packed);
  const std::vector<std::int64_t> counts = {(std::int64_t{1} << 20) + 4099, 3};
  std::vector<std::vector<std::int64_t>> host_keys;
  std::vector<SpaceBuffer> keys, outs;
  std::vector<kernels::DecodeTask> tasks;
  const std::size_t row_out = 256 * kernels::out_bytes(OutDtype::bf16);
  for (const std::int64_t count : counts) {
    std::vector<std::int64_t> k(static_cast<std::size_t>(count));
    for (auto& key : k) key = static_cast<std::int64_t>(rng() % 4200);  // a few outside the rows
    host_keys.push_back(k);
    keys.emplace_back(*space);
    keys.back().assign(std::span<const std::int64_t>(k));
    outs.emplace_back(*space);
    outs.back().reserve(static_cast<std::size_t>(count) * row_out);
    space->fill_zero(outs.back().data(), outs.back().capacity());
    tasks.push_back({table.view, keys.back().as<std::int64_t>(), count, outs.back().data()});
  }
  decode_step(*space, tasks, OutDtype::bf16);
  for (std::size_t d = 0; d < tasks.size(); ++d) {
    const auto got = outs[d].to_host<std::uint8_t>(host_keys[d].size() * row_out);
    std::vector<std::uint8_t> expected(row_out);
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < host_keys[d].size(); ++i) {
      kernels::decode_row(table.host_view, host_keys[d][i], OutDtype::bf16, expected.data(), 0);
      wrong += std::memcmp(expected.data(), got.data() + i * row_out, row_out) != 0 ? 1 : 0;
    }
    EXPECT_EQ(wrong, 0) << "task " << d << " of " << host_keys[d].size() << " rows";
  }
}

TEST(StepKernels, SlotHashEqualsTheReferenceOfEachSlot) {
  for (const auto& [space, threads] : space_cases()) {
    const KernelThreads kernel_threads(threads);
    std::mt19937_64 rng(1618);
    for (int model = 0; model < 30; ++model) {
      const ModelConfig config = random_config(rng);
      const int layers = 1 + static_cast<int>(rng() % 4);
      const int heads = config.total_heads();
      const int width = config.ngram_size - 1;
      std::vector<kernels::NgramHashParams> params;
      for (int d = 0; d < layers; ++d) params.push_back(make_hash_params(derive_table_spec(config, d)));
      const int slots = 1 + static_cast<int>(rng() % 4);
      std::vector<std::vector<reference::Request>> requests;
      std::vector<TokenBatch> batches;
      std::int64_t slot_tokens = 1;
      for (int s = 0; s < slots; ++s) {
        requests.push_back(random_requests(rng, config, 6, 20));
        batches.push_back(to_batch(config, requests.back()));
        slot_tokens = std::max(slot_tokens, batches.back().num_tokens());
      }
      slot_tokens += static_cast<std::int64_t>(rng() % 5);  // padding beyond the largest
      const auto block = static_cast<std::size_t>(kernels::SlotBatchView::block_size(slot_tokens, width));
      std::vector<std::int64_t> packed(block * static_cast<std::size_t>(slots));
      for (int s = 0; s < slots; ++s)
        pack_slot(batches[static_cast<std::size_t>(s)], slot_tokens,
                  std::span<std::int64_t>(packed).subspan(static_cast<std::size_t>(s) * block, block));
      SpaceBuffer blocks(*space), space_params(*space), ids(*space);
      blocks.assign(std::span<const std::int64_t>(packed));
      space_params.assign(std::span<const kernels::NgramHashParams>(params));
      const std::size_t per_layer = static_cast<std::size_t>(slots * slot_tokens) * static_cast<std::size_t>(heads);
      ids.reserve(static_cast<std::size_t>(layers) * per_layer * 8);
      const kernels::SlotBatchView view{blocks.as<std::int64_t>(), slots, slot_tokens, width};
      // Counted as hashed: each layer's ids of random tokens inside random rows and outside
      // others, against a count of the hashed ids below.
      std::vector<std::int64_t> bounds;
      for (int d = 0; d < layers; ++d) random_tally_bounds(rng, derive_table_spec(config, d).logical_rows, bounds);
      const std::int64_t all_tokens = slots * slot_tokens;
      const std::int64_t first_token = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(all_tokens + 1));
      const std::int64_t last_token =
          first_token + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(all_tokens - first_token + 1));
      SpaceBuffer tally_bounds(*space), outside(*space);
      tally_bounds.assign(std::span<const std::int64_t>(bounds));
      const std::vector<unsigned long long> zeros(static_cast<std::size_t>(layers), 0);
      outside.assign(std::span<const unsigned long long>(zeros));
      const kernels::IdTally tally{tally_bounds.as<std::int64_t>(), outside.as<unsigned long long>(), first_token,
                                   last_token};
      hash_step(*space, space_params.as<kernels::NgramHashParams>(), layers, heads, view, ids.as<std::int64_t>(),
                tally);
      const auto got = ids.to_host<std::int64_t>(static_cast<std::size_t>(layers) * per_layer);
      const auto counted = outside.to_host<unsigned long long>(static_cast<std::size_t>(layers));
      for (int d = 0; d < layers; ++d)
        for (int s = 0; s < slots; ++s) {
          const auto expected = flatten(reference::ngram_ids(reference::layer_layout(config, d), config.ngram_size,
                                                             config.heads_per_ngram, config.eos_token_id,
                                                             requests[static_cast<std::size_t>(s)]));
          const auto first =
              got.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(d) * per_layer +
                                                        static_cast<std::size_t>(s * slot_tokens * heads));
          EXPECT_TRUE(std::equal(expected.begin(), expected.end(), first))
              << "model " << model << " layer " << d << " slot " << s << (space->on_device() ? " cuda" : " host")
              << ", kernel threads " << threads;
        }
      for (int d = 0; d < layers; ++d) {
        // The slots' tokens in order, padding included (its ids as hashed).
        unsigned long long expected = 0;
        for (std::int64_t t = first_token; t < last_token; ++t)
          for (int h = 0; h < heads; ++h) {
            const std::int64_t id =
                got[static_cast<std::size_t>(d) * per_layer + static_cast<std::size_t>(t * heads + h)];
            expected += tallied(bounds, d, id) ? 1 : 0;
          }
        EXPECT_EQ(counted[static_cast<std::size_t>(d)], expected)
            << "model " << model << " layer " << d << (space->on_device() ? " cuda" : " host") << ", tokens ["
            << first_token << ", " << last_token << ")";
      }
    }
  }
}

// The decode that hashes its own keys (hash_and_decode_step) against the decode core on the
// host, keyed by the ids of the host's slot hash: one launch where the step's tables share a
// format and split into aligned chunks (FP8-E8M0 padded, BF16, NVFP4 with its products),
// the hash kernel then the decode where they do not (mixed formats, BF16 rows of 20 values)
// or where the step is too long for the decode to hash. One slot's steps again with the
// block left in pinned memory (on the GPU carried in the launch's parameters where it fits,
// else pulled first; on the host copied), the space's copy poisoned.
TEST(StepKernels, DecodeThatHashesItsKeysEqualsHashThenDecode) {
  struct Layer {
    RowFormat format;
    int head_dim;
    ScalesAt scales_at;
  };
  const std::vector<std::vector<Layer>> steps = {
      {{RowFormat::fp8_e8m0, 256, ScalesAt::padded}, {RowFormat::fp8_e8m0, 256, ScalesAt::padded}},
      {{RowFormat::bf16, 160, ScalesAt::plane}},
      {{RowFormat::nvfp4, 64, ScalesAt::padded},
       {RowFormat::nvfp4, 64, ScalesAt::padded},
       {RowFormat::nvfp4, 64, ScalesAt::padded}},
      {{RowFormat::fp8, 160, ScalesAt::plane}, {RowFormat::bf16, 160, ScalesAt::plane}},
      {{RowFormat::bf16, 20, ScalesAt::plane}, {RowFormat::bf16, 20, ScalesAt::plane}},
  };
  const auto host = make_host_space();
  for (const auto& [space, threads] : space_cases()) {
    const KernelThreads kernel_threads(threads);
    std::mt19937_64 rng(1414);
    for (int model = 0; model < 12; ++model) {
      ModelConfig config = random_config(rng);
      const std::int64_t bases[] = {2, 3, 100};  // tables small enough to hold most ids
      config.ngram_vocab_size_base = bases[rng() % 3];
      const std::vector<Layer>& step = steps[static_cast<std::size_t>(model) % steps.size()];
      const int layers = static_cast<int>(step.size());
      const int heads = config.total_heads();
      const int width = config.ngram_size - 1;
      std::vector<kernels::NgramHashParams> params;
      for (int d = 0; d < layers; ++d) params.push_back(make_hash_params(derive_table_spec(config, d)));
      // Every third model one slot (a step whose block may stay in pinned memory).
      const int slots = model % 3 == 2 ? 1 : 1 + static_cast<int>(rng() % 3);
      // Short slots, then long ones: steps hashed by the decode from its shared-memory copy of
      // the slot blocks, and steps whose ids or slot blocks are too many for it (hashed first).
      const bool long_slots = model >= 6;
      std::vector<TokenBatch> batches;
      std::int64_t slot_tokens = 1;
      for (int s = 0; s < slots; ++s) {
        batches.push_back(to_batch(config, random_requests(rng, config, long_slots ? 24 : 5, long_slots ? 48 : 16)));
        slot_tokens = std::max(slot_tokens, batches.back().num_tokens());
      }
      const auto block = static_cast<std::size_t>(kernels::SlotBatchView::block_size(slot_tokens, width));
      std::vector<std::int64_t> packed(block * static_cast<std::size_t>(slots));
      kernels::PaddedBlock layout;
      for (int s = 0; s < slots; ++s)
        layout = pack_slot(batches[static_cast<std::size_t>(s)], slot_tokens,
                           std::span<std::int64_t>(packed).subspan(static_cast<std::size_t>(s) * block, block));
      const std::size_t per_layer = static_cast<std::size_t>(slots * slot_tokens) * static_cast<std::size_t>(heads);
      // The expected keys: the host's slot hash.
      std::vector<std::int64_t> expected_ids(static_cast<std::size_t>(layers) * per_layer);
      hash_step(*host, params.data(), layers, heads, {packed.data(), slots, slot_tokens, width}, expected_ids.data());

      SpaceBuffer blocks(*space), space_params(*space), ids(*space);
      blocks.assign(std::span<const std::int64_t>(packed));
      space_params.assign(std::span<const kernels::NgramHashParams>(params));
      ids.reserve(expected_ids.size() * 8);
      // A tally of the lookups of some tokens that fall in a layer's copy outside a part of
      // it (peer reads), counted by whichever kernel hashes; its expected counts straight from
      // the host's ids.
      std::vector<std::int64_t> tally_bounds;
      std::vector<unsigned long long> expected_outside(static_cast<std::size_t>(layers));
      const std::int64_t tallied_tokens = slots * slot_tokens;
      const auto tally_first = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(tallied_tokens));
      const std::int64_t tally_last =
          tally_first + 1 + static_cast<std::int64_t>(rng() % (tallied_tokens - tally_first));
      for (int d = 0; d < layers; ++d) {
        const std::int64_t rows = derive_table_spec(config, d).logical_rows;
        const std::int64_t copy[2] = {rows / 8, rows - rows / 8};
        const std::int64_t part[2] = {rows / 3, rows / 2};
        tally_bounds.insert(tally_bounds.end(), {copy[0], copy[1], part[0], part[1]});
        for (std::size_t i = 0; i < per_layer; ++i) {
          const std::int64_t id = expected_ids[static_cast<std::size_t>(d) * per_layer + i];
          const auto token = static_cast<std::int64_t>(i) / heads;
          expected_outside[static_cast<std::size_t>(d)] += token >= tally_first && token < tally_last &&
                                                           id >= copy[0] && id < copy[1] &&
                                                           (id < part[0] || id >= part[1]);
        }
      }
      SpaceBuffer space_bounds(*space), outside(*space);
      space_bounds.assign(std::span<const std::int64_t>(tally_bounds));
      const std::vector<unsigned long long> none(static_cast<std::size_t>(layers), 0);
      outside.assign(std::span<const unsigned long long>(none));
      const kernels::StepHash hash{
          space_params.as<kernels::NgramHashParams>(),
          layers,
          heads,
          {blocks.as<std::int64_t>(), slots, slot_tokens, width},
          ids.as<std::int64_t>(),
          {space_bounds.as<std::int64_t>(), outside.as<unsigned long long>(), tally_first, tally_last}};
      std::vector<std::unique_ptr<RandomTable>> tables;
      std::vector<SpaceBuffer> outs;
      std::vector<kernels::DecodeTask> tasks;
      for (int d = 0; d < layers; ++d) {
        const Layer& layer = step[static_cast<std::size_t>(d)];
        // The table's upper three quarters: the first quarter's ids are foreign (zeros).
        const std::int64_t rows = derive_table_spec(config, d).logical_rows;
        tables.push_back(std::make_unique<RandomTable>(*space, rng, layer.format, layer.head_dim, rows - rows / 4,
                                                       rows / 4, layer.scales_at));
        outs.emplace_back(*space);
        outs.back().reserve(per_layer * static_cast<std::size_t>(layer.head_dim) * 4);
        tasks.push_back({tables.back()->view, hash.ids + static_cast<std::size_t>(d) * per_layer,
                         static_cast<std::int64_t>(per_layer), outs.back().data()});
      }
      const OutDtype dtype = model % 2 == 0 ? OutDtype::bf16 : OutDtype::f32;
      const auto expect_decoded = [&](const char* block_from) {
        for (int d = 0; d < layers; ++d) {
          const int dim = step[static_cast<std::size_t>(d)].head_dim;
          const std::size_t row_out = static_cast<std::size_t>(dim) * kernels::out_bytes(dtype);
          const auto got = outs[static_cast<std::size_t>(d)].to_host<std::uint8_t>(per_layer * row_out);
          std::vector<std::uint8_t> expected(row_out);
          std::int64_t wrong = 0;
          for (std::size_t i = 0; i < per_layer; ++i) {
            kernels::decode_row(tables[static_cast<std::size_t>(d)]->host_view,
                                expected_ids[static_cast<std::size_t>(d) * per_layer + i], dtype, expected.data(), 0);
            wrong += std::memcmp(expected.data(), got.data() + i * row_out, row_out) != 0 ? 1 : 0;
          }
          EXPECT_EQ(wrong, 0) << "model " << model << " layer " << d << " of " << per_layer << " rows ("
                              << to_string(step[static_cast<std::size_t>(d)].format) << ", " << dim << " values)"
                              << (space->on_device() ? " cuda" : " host") << ", kernel threads " << threads
                              << ", the block " << block_from;
        }
        EXPECT_EQ(outside.to_host<unsigned long long>(static_cast<std::size_t>(layers)), expected_outside)
            << "model " << model << ", the tally, the block " << block_from;
        outside.assign(std::span<const unsigned long long>(none));
      };
      hash_and_decode_step(*space, hash, tasks, dtype);
      expect_decoded("in the space");
      if (slots != 1) continue;
      // Every word of the space's copy poisoned, the outputs, and on the GPU the padding of
      // the pinned copy (the host's copy reads it: StepSpace::copy_from_pinned): a launch
      // that read any of them, or wrote nothing, decodes other rows.
      constexpr std::int64_t poison = 0x5A5A5A5A5A5A5A5A;
      HostBuffer pinned(*space, block * sizeof(std::int64_t));
      const std::vector<std::int64_t> source = space->on_device() ? padding_poisoned(packed, layout, poison) : packed;
      std::copy(source.begin(), source.end(), pinned.as<std::int64_t>());
      blocks.assign(std::span<const std::int64_t>(std::vector<std::int64_t>(block, poison)));
      for (int d = 0; d < layers; ++d)
        outs[static_cast<std::size_t>(d)].assign(std::span<const std::uint8_t>(std::vector<std::uint8_t>(
            per_layer * static_cast<std::size_t>(step[static_cast<std::size_t>(d)].head_dim) * 4, 0xA5)));
      hash_and_decode_step(*space, hash, tasks, dtype, {pinned.as<std::int64_t>(), layout});
      expect_decoded("in pinned memory");
    }
  }
}

#if PLESHARD_HAVE_CUDA
// One layer's step of one slot whose decode hashes its keys (an FP8 table of 160 values,
// aligned, so one launch hashes and decodes), batches packed into pinned buffers of their own,
// and each batch's rows as the host's hash and decode core make them.
struct OneSlotStep {
  OneSlotStep(std::mt19937_64& rng, std::int64_t tokens)
      : space(make_tier_space(StorageTier::device)),
        config(short_config(rng)),
        params(make_hash_params(derive_table_spec(config, 0))),
        heads(config.total_heads()),
        width(config.ngram_size - 1),
        slot_tokens(tokens),
        block(static_cast<std::size_t>(kernels::SlotBatchView::block_size(slot_tokens, width))),
        per_layer(static_cast<std::size_t>(slot_tokens * heads)),
        out_bytes(per_layer * 160 * kernels::out_bytes(OutDtype::bf16)),
        table(*space, rng, RowFormat::fp8, 160, derive_table_spec(config, 0).logical_rows, 0, ScalesAt::plane),
        space_params(*space),
        blocks(*space),
        ids(*space),
        out(*space) {
    space_params.assign(std::span<const kernels::NgramHashParams>(&params, 1));
    blocks.reserve(block * sizeof(std::int64_t));
    ids.reserve(per_layer * sizeof(std::int64_t));
    out.reserve(out_bytes);
    hash.params = space_params.as<kernels::NgramHashParams>();
    hash.layers = 1;
    hash.heads = heads;
    hash.batch = {blocks.as<std::int64_t>(), 1, slot_tokens, width};
    hash.ids = ids.as<std::int64_t>();
    task = {table.view, hash.ids, static_cast<std::int64_t>(per_layer), out.data()};
  }

  // Small tables (most ids inside), contexts of 1 to 5 tokens.
  static ModelConfig short_config(std::mt19937_64& rng) {
    ModelConfig c = random_config(rng);
    c.ngram_vocab_size_base = 3;
    return c;
  }

  // A batch of fewer tokens than the slot (padding in every run) packed into a pinned buffer
  // of its own whose padding is `poison` where one is given (a copy must write it, never read
  // it); its packed words and the ids the host hashes from them kept.
  kernels::PinnedBlock add_batch(std::mt19937_64& rng, std::optional<std::int64_t> poison) {
    std::vector<std::int64_t> words(block);
    const int most = std::max(1, static_cast<int>(slot_tokens) / 8);
    const kernels::PaddedBlock layout =
        pack_slot(to_batch(config, random_requests(rng, config, 4, most)), slot_tokens, words);
    buffers.push_back(std::make_unique<HostBuffer>(*space, block * sizeof(std::int64_t)));
    auto* pinned = buffers.back()->as<std::int64_t>();
    const std::vector<std::int64_t> source = poison ? padding_poisoned(words, layout, *poison) : words;
    std::copy(source.begin(), source.end(), pinned);
    expected_ids.emplace_back(per_layer);
    hash_step(*make_host_space(), &params, 1, heads, {words.data(), 1, slot_tokens, width}, expected_ids.back().data());
    packed.push_back(std::move(words));
    return {pinned, layout};
  }

  // The rows in `got` are those of batch b.
  void expect_rows(const SpaceBuffer& got_in, std::size_t b, const std::string& which) const {
    const auto got = got_in.to_host<std::uint8_t>(out_bytes);
    std::vector<std::uint8_t> expected(160 * 2);
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < per_layer; ++i) {
      kernels::decode_row(table.host_view, expected_ids[b][i], OutDtype::bf16, expected.data(), 0);
      wrong += std::memcmp(expected.data(), got.data() + i * expected.size(), expected.size()) != 0 ? 1 : 0;
    }
    EXPECT_EQ(wrong, 0) << which << ": batch " << b << ", slots of " << slot_tokens << " tokens, context " << width;
  }

  std::unique_ptr<StepSpace> space;
  ModelConfig config;
  kernels::NgramHashParams params;
  int heads;
  int width;
  std::int64_t slot_tokens;
  std::size_t block;
  std::size_t per_layer;
  std::size_t out_bytes;
  RandomTable table;
  SpaceBuffer space_params, blocks, ids, out;
  kernels::StepHash hash;
  kernels::DecodeTask task;
  std::vector<std::unique_ptr<HostBuffer>> buffers;
  std::vector<std::vector<std::int64_t>> packed;
  std::vector<std::vector<std::int64_t>> expected_ids;
};

// An eager decode that hashes one slot left in pinned memory carries a block that fits its
// parameters and leaves the space's copy alone; one word more and it pulls the block there
// first (padding written, not read). Both decode the batch's rows.
TEST(StepKernels, DecodeCarriesABlockThatFitsAndPullsOneThatDoesNot) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 rng(5151);
  constexpr std::int64_t poison = -1;  // a token, boundary and context that hash differently
  for (int model = 0; model < 6; ++model) {
    // The longest slot whose block fits, then one token more.
    std::mt19937_64 peek = rng;
    const int width = OneSlotStep::short_config(peek).ngram_size - 1;
    std::int64_t fits = 1;
    while (kernels::SlotBatchView::block_size(fits + 1, width) <= kernels::carried_block_words()) ++fits;
    for (const std::int64_t slot_tokens : {fits, fits + 1}) {
      std::mt19937_64 same = rng;
      OneSlotStep step(same, slot_tokens);
      const kernels::PinnedBlock pinned = step.add_batch(same, poison);
      const bool carried = slot_tokens == fits;
      step.blocks.assign(std::span<const std::int64_t>(std::vector<std::int64_t>(step.block, poison)));
      hash_and_decode_step(*step.space, step.hash, {&step.task, 1}, OutDtype::bf16, pinned);
      step.expect_rows(step.out, 0, carried ? "carried" : "pulled");
      const auto in_space = step.blocks.to_host<std::int64_t>(step.block);
      if (carried) {
        EXPECT_EQ(in_space, std::vector<std::int64_t>(step.block, poison)) << "a carried block was copied in";
      } else {
        EXPECT_EQ(in_space, step.packed[0]) << "a pulled block differs from the packed one";
      }
    }
    rng.discard(1000);
  }
}

// A CUDA graph of a step whose decode hashes one slot left in pinned memory. A long slot's
// (a launch of many blocks) pulls the block first (or the hash kernel before the decode
// does): each launch decodes the batch of the buffer it is given, launches of different
// batches enqueued together included. An 8-token slot's decode reads the block in the buffer
// it was captured with, whole, at each replay whatever that buffer then holds, and refuses
// another buffer. (A captured launch reads in place up to 16 blocks of 24 FP8 rows: 8 tokens
// of at most 40 heads take at most 14, 400 tokens at least 17.) Every launch's rows are
// those of the host's hash of its batch.
TEST(StepKernels, GraphDecodesTheBatchEachLaunchNames) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 rng(4242);
  for (const std::int64_t slot_tokens : {8, 400}) {
    OneSlotStep step(rng, slot_tokens);
    const bool in_place = slot_tokens == 8;
    std::vector<kernels::PinnedBlock> batches;
    for (int b = 0; b < 3; ++b)
      batches.push_back(step.add_batch(rng, in_place ? std::nullopt : std::optional<std::int64_t>{-1}));
    CudaGraph graph(stream_of(*step.space), [&] {
      hash_and_decode_step(*step.space, step.hash, {&step.task, 1}, OutDtype::bf16, batches[0]);
    });
    cudaStream_t stream = stream_of(*step.space);
    if (in_place) {
      EXPECT_FALSE(graph.pulls());
      EXPECT_THROW(graph.launch(stream, batches[1].words, batches[1].layout), SystemError)
          << "a graph that reads its own buffer, given another";
      for (const std::size_t b : {1ul, 2ul, 0ul, 2ul}) {
        std::copy(step.packed[b].begin(), step.packed[b].end(), step.buffers[0]->as<std::int64_t>());
        graph.launch(stream);
        step.expect_rows(step.out, b, "a replay reading its buffer");
      }
      continue;
    }
    EXPECT_TRUE(graph.pulls());
    EXPECT_THROW(graph.launch(stream), SystemError) << "a graph that pulls a block, given none";
    for (const std::size_t b : {1ul, 2ul, 0ul, 2ul}) {
      graph.launch(stream, batches[b].words, batches[b].layout);
      step.expect_rows(step.out, b, "a launch");
    }
    // Two launches enqueued together each decode their own batch.
    SpaceBuffer kept(*step.space);
    kept.reserve(step.out_bytes);
    graph.launch(stream, batches[1].words, batches[1].layout);
    step.space->copy(kept.data(), step.out.data(), step.out_bytes);
    graph.launch(stream, batches[0].words, batches[0].layout);
    step.expect_rows(kept, 1, "the first of two");
    step.expect_rows(step.out, 0, "the second of two");
  }
}
#endif

// The one id of a head equals that head's entry of the token's ids (Qwen's fill rule and
// Engram's), on the host; the GPU's use of it is the test above.
TEST(StepKernels, WidenedIdsAreTheOwnersRowsAndCountTheirTally) {
  for (const auto& [space, threads] : space_cases()) {
    const KernelThreads kernel_threads(threads);
    std::mt19937_64 rng(2718);
    for (int round = 0; round < 40; ++round) {
      const int width = 1 + static_cast<int>(rng() % 8);
      const std::int64_t range = std::min<std::int64_t>(1 + static_cast<std::int64_t>(rng() % 5000),
                                                        width < 8 ? std::int64_t{1} << (8 * width) : INT64_MAX);
      const std::int64_t first = static_cast<std::int64_t>(rng() % 100000);
      // Up to a few grids' worth, so that a thread widens several ids.
      const auto count = static_cast<std::int64_t>(rng() % (round % 4 == 0 ? 300000 : 3000));
      const int layers = 1 + static_cast<int>(rng() % 3);
      const int layer = static_cast<int>(rng() % static_cast<std::uint64_t>(layers));
      std::vector<std::int64_t> local(static_cast<std::size_t>(count));
      std::vector<std::uint8_t> narrow(static_cast<std::size_t>(count * width));
      for (std::int64_t i = 0; i < count; ++i) {
        local[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(range));
        kernels::narrow_local_id(narrow.data(), width, i,
                                 static_cast<std::uint64_t>(local[static_cast<std::size_t>(i)]));
      }
      std::vector<std::int64_t> bounds;
      for (int d = 0; d < layers; ++d) random_tally_bounds(rng, first + range, bounds);
      SpaceBuffer sent(*space), out(*space), tally_bounds(*space), outside(*space);
      sent.assign(std::span<const std::uint8_t>(narrow));
      out.reserve(static_cast<std::size_t>(std::max<std::int64_t>(1, count)) * sizeof(std::int64_t));
      tally_bounds.assign(std::span<const std::int64_t>(bounds));
      const std::vector<unsigned long long> zeros(static_cast<std::size_t>(layers), 0);
      outside.assign(std::span<const unsigned long long>(zeros));
      const std::int64_t from = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(count + 1));
      const kernels::IdTally tally{tally_bounds.as<std::int64_t>(), outside.as<unsigned long long>(), from, count};
      widen_local_ids_step(*space, sent.as<std::uint8_t>(), width, count, first, out.as<std::int64_t>(), tally, layer);
      const auto got = out.to_host<std::int64_t>(static_cast<std::size_t>(count));
      const auto counted = outside.to_host<unsigned long long>(static_cast<std::size_t>(layers));
      unsigned long long expected = 0;
      for (std::int64_t i = 0; i < count; ++i) {
        const std::int64_t id = first + local[static_cast<std::size_t>(i)];
        ASSERT_EQ(got[static_cast<std::size_t>(i)], id) << "entry " << i << ", width " << width;
        if (i >= from) expected += tallied(bounds, layer, id) ? 1 : 0;
      }
      for (int d = 0; d < layers; ++d)
        EXPECT_EQ(counted[static_cast<std::size_t>(d)], d == layer ? expected : 0)
            << "layer " << d << " of " << layers << (space->on_device() ? " cuda" : " host") << ", " << count
            << " ids from " << from;
    }
  }
}

TEST(StepKernels, OneHeadsIdIsItsEntryOfTheTokensIds) {
  std::mt19937_64 rng(1732);
  for (int model = 0; model < 50; ++model) {
    const ModelConfig config = random_config(rng);
    kernels::NgramHashParams params = make_hash_params(derive_table_spec(config, 0));
    // Half the models block as Engram does: from the token itself, filled with another value.
    if (model % 2 == 1) params.fill = {7, config.eos_token_id, 0};
    const TokenBatch batch = to_batch(config, random_requests(rng, config, 6, 20));
    const kernels::NgramBatchView view = batch.view();
    std::vector<std::int64_t> all(static_cast<std::size_t>(params.total_heads()));
    for (std::int64_t t = 0; t < batch.num_tokens(); ++t) {
      kernels::ngram_ids_of_token(params, view, t, all.data());
      for (int h = 0; h < params.total_heads(); ++h)
        ASSERT_EQ(kernels::ngram_id_of_token(params, view, t, h), all[static_cast<std::size_t>(h)])
            << "model " << model << " token " << t << " head " << h;
    }
  }
}

}  // namespace

namespace {

// The owner exchange's packing, checked against the table's bytes read on the host: a
// packed row is the row's codes then its block scales, zeros for keys the table lacks; the
// decode core reads packed rows as it reads the table.
TEST(StepKernels, PackedRowsAreTheStoredBytesAndDecodeAsTheTable) {
  std::mt19937_64 rng(314);
  struct Case {
    RowFormat format;
    int head_dim;
    ScalesAt scales_at;
  };
  const Case cases[] = {{RowFormat::bf16, 20, ScalesAt::plane},     {RowFormat::fp8, 160, ScalesAt::plane},
                        {RowFormat::nvfp4, 160, ScalesAt::padded},  {RowFormat::nvfp4, 32, ScalesAt::plane},
                        {RowFormat::f32, 6, ScalesAt::plane},       {RowFormat::f16, 48, ScalesAt::plane},
                        {RowFormat::fp8_e8m0, 32, ScalesAt::plane}, {RowFormat::fp8_e8m0, 160, ScalesAt::padded},
                        {RowFormat::fp8_e8m0, 96, ScalesAt::packed}};
  for (const auto& space : spaces()) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(to_string(c.format)) + (space->on_device() ? " cuda" : " host"));
      const std::int64_t rows = 100;
      const std::int64_t begin = 40;
      const RandomTable table(*space, rng, c.format, c.head_dim, rows, begin, c.scales_at);
      std::vector<std::int64_t> keys(777);
      for (auto& k : keys) k = static_cast<std::int64_t>(rng() % 160);  // some before, some past the rows
      SpaceBuffer d_keys(*space);
      SpaceBuffer d_packed(*space);
      d_keys.assign(std::span<const std::int64_t>(keys));
      const std::size_t row_bytes = kernels::stored_row_bytes(c.format, c.head_dim);
      const std::size_t scale_bytes = kernels::scale_row_bytes(c.format, c.head_dim);
      const std::size_t pitch = kernels::packed_row_bytes(c.format, c.head_dim);
      d_packed.reserve(keys.size() * pitch);
      const kernels::PackTask task{table.view, d_keys.as<std::int64_t>(), static_cast<std::int64_t>(keys.size()),
                                   d_packed.data()};
      pack_rows_step(*space, {&task, 1});
      const std::vector<std::uint8_t> got = d_packed.to_host<std::uint8_t>(keys.size() * pitch);
      std::vector<std::uint8_t> expected(keys.size() * pitch, 0);
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (keys[i] < begin || keys[i] >= begin + rows) continue;
        const auto local = static_cast<std::size_t>(keys[i] - begin);
        std::memcpy(&expected[i * pitch], table.host_view.row_at(local), row_bytes);
        if (scale_bytes != 0)
          std::memcpy(&expected[i * pitch + row_bytes], table.host_view.scales_at(local), scale_bytes);
      }
      ASSERT_EQ(got, expected);

      // Decoding the packed rows by position gives what decoding the table by key gives.
      const kernels::TableView packed = kernels::packed_rows_view(table.host_view, got.data(), keys.size());
      std::vector<float> from_table(keys.size() * static_cast<std::size_t>(c.head_dim));
      std::vector<float> from_packed(from_table.size());
      for (std::size_t i = 0; i < keys.size(); ++i) {
        kernels::decode_row(table.host_view, keys[i], OutDtype::f32, from_table.data(),
                            static_cast<std::int64_t>(i) * c.head_dim);
        kernels::decode_row(packed, static_cast<std::int64_t>(i), OutDtype::f32, from_packed.data(),
                            static_cast<std::int64_t>(i) * c.head_dim);
      }
      EXPECT_EQ(0, std::memcmp(from_table.data(), from_packed.data(), from_table.size() * sizeof(float)));
    }
  }
}

}  // namespace
