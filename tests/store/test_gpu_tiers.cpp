// Device and pinned tiers against the host tier, bit for bit, for every format and output
// dtype: owned and foreign ids, padding ids, empty lookups, rows that do and do not split
// into 16-byte chunks, lookups large enough for the pinned tier's grouped path; the pinned
// tier's background lookup; a table over 4 GiB. Skips without a GPU.

#include <gtest/gtest.h>

#include <fstream>

#include <random>

#include <nlohmann/json.hpp>

#include "ckpt/synthetic.hpp"
#include "core/band_pipeline.hpp"
#include "kernels/cuda/device.hpp"
#include "store/gpu_table.hpp"
#include "store/host_table.hpp"

namespace {

using namespace pleshard;

ModelConfig config_with(const char* dtype, int ple_embed_dim) {
  nlohmann::json j = {{"vocab_size", 1000},           {"eos_token_id", 2},
                      {"num_hidden_layers", 2},       {"ngram_size", 3},
                      {"heads_per_ngram", 2},         {"ple_embed_dim", ple_embed_dim},
                      {"ngram_vocab_size_base", 700}, {"split_ngram_parts", 3},
                      {"ple_layer_ids", {1}}};
  if (dtype != nullptr) j["ple_embedding_dtype"] = dtype;
  return parse_model_config(j, "gpu tier config");
}

struct TierCase {
  StorageTier tier;
  PinnedReads reads;
  bool in_place;
};

template <std::size_t N>
std::vector<TierCase> with_sources(const std::pair<StorageTier, PinnedReads> (&tiers)[N]) {
  std::vector<TierCase> cases;
  for (const auto& [tier, reads] : tiers)
    for (bool in_place : {true, false}) cases.push_back({tier, reads, in_place});
  return cases;
}

PinnedReads reads_of(HostReads host, int uva_blocks_per_sm, double host_share = -1.0) {
  PinnedReads reads;
  reads.host = host;
  reads.uva_blocks_per_sm = uva_blocks_per_sm;
  reads.host_threads = 3;
  reads.host_share = host_share;
  return reads;
}

// A GPU tier's rows as bytes in host memory (pinned: they are host memory, page-locked in
// pieces, which one cudaMemcpy may not span).
std::vector<std::uint8_t> table_bytes(const GpuTable& table) {
  const kernels::TableView view = table.view();
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(table.range().size()) * view.row_stride());
  if (table.tier() == StorageTier::pinned) {
    std::copy_n(view.rows, bytes.size(), bytes.begin());
  } else {
    PLESHARD_CUDA_CHECK(cudaMemcpy(bytes.data(), view.rows, bytes.size(), cudaMemcpyDeviceToHost));
  }
  return bytes;
}

class GpuTiers : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernels::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(GpuTiers, EqualTheHostTierBitForBit) {
  struct Case {
    const char* dtype;
    RowFormat format;
  };
  const Case cases[] = {{nullptr, RowFormat::f32},   {nullptr, RowFormat::bf16},
                        {nullptr, RowFormat::f16},   {"float8_e4m3fn", RowFormat::fp8},
                        {"nvfp4", RowFormat::nvfp4}, {"float8_e4m3fn", RowFormat::fp8_e8m0}};
  std::mt19937_64 rng(12);
  // 48 values: nvfp4 rows of 24 bytes; fp8_e8m0 rows of 160 and 32 values, 165 and 33 bytes
  // with their scales (packed, as the cache and the owner exchange keep them, not 16-byte chunks).
  for (int ple_embed_dim : {4 * 160, 4 * 32, 4 * 48}) {
    for (const auto& c : cases) {
      if (!kernels::whole_blocks(c.format, ple_embed_dim / 4)) continue;
      const ModelConfig config = config_with(c.dtype, ple_embed_dim);
      const TableSource source = synthetic_tables(config, c.format, 31).front();
      const std::int64_t rows = source.info.layout.rows;
      const RowRange range{97, rows - 41};
      const HostTable host(source, range);
      // The pinned tier read through UVA with its gather's SM cap (the default) and without,
      // gathered by the host at every size, and shared between the host and the GPU (none,
      // a third, all of the rows the host's, and the share balanced from step to step).
      const std::pair<StorageTier, PinnedReads> tiers[] = {
          {StorageTier::device, {}},
          {StorageTier::pinned, reads_of(HostReads::uva, kernels::k_uva_gather_blocks_per_sm)},
          {StorageTier::pinned, reads_of(HostReads::uva, 0)},
          {StorageTier::pinned, reads_of(HostReads::gather, kernels::k_uva_gather_blocks_per_sm)},
          {StorageTier::pinned, reads_of(HostReads::both, kernels::k_uva_gather_blocks_per_sm, 0.0)},
          {StorageTier::pinned, reads_of(HostReads::both, kernels::k_uva_gather_blocks_per_sm, 0.37)},
          {StorageTier::pinned, reads_of(HostReads::both, 0, 1.0)},
          {StorageTier::pinned, reads_of(HostReads::both, kernels::k_uva_gather_blocks_per_sm)}};
      // Rows made on the GPU in place, and rows loaded from the source's bytes.
      for (const auto& [tier, reads, in_place] : with_sources(tiers)) {
        TableSource from = source;
        if (!in_place) from.synthetic.reset();
        const GpuTable gpu(from, range, tier, reads);
        for (OutDtype dtype : {OutDtype::f32, OutDtype::bf16, OutDtype::f16}) {
          SCOPED_TRACE(std::string(to_string(c.format)) + " dim " + std::to_string(ple_embed_dim / 4) + " " +
                       to_string(tier) + " " + to_string(reads.host) + " share " + std::to_string(reads.host_share) +
                       " blocks/SM " + std::to_string(reads.uva_blocks_per_sm) + " " + to_string(dtype) +
                       (in_place ? " made in place" : " loaded"));
          // The last size takes the pinned tier's grouped path (sorted, distinct rows once).
          for (std::int64_t n :
               {std::int64_t{0}, std::int64_t{1}, std::int64_t{37}, std::int64_t{5000}, k_pinned_group_min_ids + 5}) {
            std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
            for (auto& id : ids) id = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows));
            if (n > 2) ids[1] = 0;  // padding id
            const std::size_t out_bytes =
                ids.size() * static_cast<std::size_t>(config.head_dim()) * kernels::out_bytes(dtype);
            std::vector<std::uint8_t> expected(out_bytes), got(out_bytes, 0xCD);
            host.lookup(ids, dtype, expected.data());
            kernels::DeviceBuffer<std::int64_t> d_ids(ids.size());
            kernels::DeviceBuffer<std::uint8_t> d_out(out_bytes);
            d_ids.copy_from_host(std::span<const std::int64_t>(ids));
            PLESHARD_CUDA_CHECK(cudaMemset(d_out.data(), 0xCD, out_bytes));  // poison
            gpu.lookup(d_ids.data(), n, dtype, d_out.data(), nullptr);
            d_out.copy_to_host(std::span<std::uint8_t>(got));
            PLESHARD_CUDA_CHECK(cudaDeviceSynchronize());
            ASSERT_EQ(got, expected) << n << " ids";
          }
        }
      }
    }
  }
}

}  // namespace

#include "ckpt/checkpoint_fixtures.hpp"
#include "engine/embed.hpp"
#include "hash/random_batches.hpp"

namespace {

TEST_F(GpuTiers, EmbedGivesTheSameBytesFromEveryTier) {
  using namespace pleshard::testing_support;
  const ScratchDir dir;
  std::mt19937_64 rng(77);
  const std::pair<const char*, RowFormat> formats[] = {{nullptr, RowFormat::bf16},
                                                       {"float8_e4m3fn", RowFormat::fp8},
                                                       {"nvfp4", RowFormat::nvfp4},
                                                       {"float8_e4m3fn", RowFormat::fp8_e8m0}};
  for (const auto& [dtype, format] : formats) {
    const ModelConfig config = small_config(dtype);
    const std::string name = to_string(format);
    write_checkpoint(dir / name, config, synthetic_tables(config, format, 5), {});
    const auto checkpoint = open_ple_checkpoint(dir / name, config);
    TokenBatch batch(config.ngram_size);
    for (const auto& r : random_requests(rng, config, 8, 60)) batch.add_request(r.tokens, r.context);
    const auto host = embed_batch(config, *checkpoint, batch, OutDtype::bf16, StorageTier::host);
    for (StorageTier tier : {StorageTier::device, StorageTier::pinned}) {
      const auto gpu = embed_batch(config, *checkpoint, batch, OutDtype::bf16, tier);
      ASSERT_EQ(gpu.size(), host.size());
      for (std::size_t d = 0; d < host.size(); ++d)
        EXPECT_EQ(gpu[d].data, host[d].data) << name << " " << to_string(tier) << " layer " << d;
    }
  }
}

}  // namespace

#include "exec/cuda_step_space.hpp"
#include "exec/step_kernels.hpp"
#include "large_table.hpp"
#include "store/gpu_store.hpp"

namespace {

// A kernel that keeps the main stream busy for a while.
void keep_busy(cudaStream_t stream, kernels::DeviceBuffer<std::uint8_t>& scratch) {
  for (int i = 0; i < 20; ++i) PLESHARD_CUDA_CHECK(cudaMemsetAsync(scratch.data(), i, scratch.bytes(), stream));
}

// The pinned store gathers large queries' distinct rows on its side stream between submit()
// and wait(), while other work runs on the step's stream; the device store reads in place.
TEST_F(GpuTiers, StoreFetchRunsBesideOtherWork) {
  const ModelConfig config = config_with("float8_e4m3fn", 4 * 160);
  const TableSource source = synthetic_tables(config, RowFormat::fp8, 3).front();
  const std::int64_t rows = source.info.layout.rows;
  const RowRange range{0, rows};
  const HostTable host(source, range);
  const auto space = make_cuda_space();
  const cudaStream_t stream = stream_of(*space);
  kernels::DeviceBuffer<std::uint8_t> scratch(std::size_t{1} << 30);
  std::mt19937_64 rng(3);
  for (StorageTier tier : {StorageTier::pinned, StorageTier::device}) {
    GpuStore store({&source, 1}, {&range, 1}, tier, *space);
    const std::int64_t n = k_pinned_group_min_ids + 1000;
    store.reserve(n);
    EXPECT_EQ(store.table(0).gathers_distinct(n), tier == StorageTier::pinned);
    const std::size_t out_bytes = static_cast<std::size_t>(n) * static_cast<std::size_t>(config.head_dim()) * 2;
    kernels::DeviceBuffer<std::int64_t> d_ids(static_cast<std::size_t>(n));
    kernels::DeviceBuffer<std::uint8_t> d_out(out_bytes);
    // Two rounds on the same store: its scratch is reused.
    for (int round = 0; round < 2; ++round) {
      std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
      for (auto& id : ids) id = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows));
      ids[3] = -1;
      std::vector<std::uint8_t> expected(out_bytes), got(out_bytes);
      host.lookup(ids, OutDtype::bf16, expected.data());
      PLESHARD_CUDA_CHECK(cudaMemcpyAsync(d_ids.data(), ids.data(), ids.size() * 8, cudaMemcpyHostToDevice, stream));
      PLESHARD_CUDA_CHECK(cudaMemsetAsync(d_out.data(), 0xCD, out_bytes, stream));  // poison
      const RowQuery query{d_ids.data(), n};
      store.submit({&query, 1});
      keep_busy(stream, scratch);
      kernels::DecodeTask task = store.wait().front();
      task.out = d_out.data();
      decode_step(*space, {&task, 1}, OutDtype::bf16);
      PLESHARD_CUDA_CHECK(cudaMemcpyAsync(got.data(), d_out.data(), out_bytes, cudaMemcpyDeviceToHost, stream));
      PLESHARD_CUDA_CHECK(cudaStreamSynchronize(stream));
      EXPECT_EQ(got, expected) << to_string(tier) << " round " << round;
    }
  }
}

// A block-scaled table (NVFP4 of 16-value rows, FP8-E8M0 of 32) of more than one load band
// (about 64 MiB) for a base of a few million.
struct BlockScaledCase {
  const char* dtype;
  RowFormat format;
  int ple_embed_dim;  // 4 heads
};
constexpr BlockScaledCase k_block_scaled[] = {{"nvfp4", RowFormat::nvfp4, 64},
                                              {"float8_e4m3fn", RowFormat::fp8_e8m0, 128}};

ModelConfig bands_config(const BlockScaledCase& c, std::int64_t base) {
  const nlohmann::json j = {{"vocab_size", 1000},
                            {"eos_token_id", 2},
                            {"num_hidden_layers", 2},
                            {"ngram_size", 3},
                            {"heads_per_ngram", 2},
                            {"ple_embed_dim", c.ple_embed_dim},
                            {"ngram_vocab_size_base", base},
                            {"split_ngram_parts", 3},
                            {"ple_embedding_dtype", c.dtype},
                            {"ple_layer_ids", {1}}};
  return parse_model_config(j, "bands config");
}

// Rows past 2^32 bytes (tests/store/large_table.hpp).
// Several load bands (about 64 MiB each) and many kernel blocks: the same bytes made on the
// GPU as read from the source, block scales interleaved and padding zero, on both tiers.
TEST_F(GpuTiers, RowsMadeInPlaceAreTheSourcesBytesAcrossBands) {
  for (const BlockScaledCase& c : k_block_scaled) {
    const ModelConfig config = bands_config(c, 5'000'000);
    const TableSource source = synthetic_tables(config, c.format, 17).front();
    const RowRange range{1234567, source.info.layout.rows - 3};
    ASSERT_GT(static_cast<std::size_t>(range.size()) * source.info.layout.bytes_per_row(), 2 * k_band_bytes);
    for (StorageTier tier : {StorageTier::device, StorageTier::pinned}) {
      const std::vector<std::uint8_t> made = table_bytes(GpuTable(source, range, tier));
      // Bands on no chunks, on chunks that do not divide the range's ends, on chunks longer
      // than a band (then ignored).
      for (const std::int64_t chunk_rows : {std::int64_t{0}, std::int64_t{77777}, std::int64_t{1} << 40}) {
        TableSource loaded = source;
        loaded.synthetic.reset();
        loaded.chunk_rows = chunk_rows;
        EXPECT_TRUE(made == table_bytes(GpuTable(loaded, range, tier)))
            << to_string(c.format) << " " << to_string(tier) << ", chunks of " << chunk_rows;
      }
    }
  }
}

// Block-scaled rows of files (HDF5: chunks of 1 MiB of codes, read past the library;
// safetensors) over several bands, loaded from a row inside a chunk: the bytes made in place.
TEST_F(GpuTiers, BlockScaledFilesLoadAcrossChunksAndBands) {
  using namespace pleshard::testing_support;
  for (const BlockScaledCase& c : k_block_scaled) {
    const ModelConfig config = bands_config(c, 4'000'000);
    const std::vector<TableSource> tables = synthetic_tables(config, c.format, 23);
    const TableSource& made = tables.front();
    const RowRange range{12345, made.info.layout.rows - 5};
    ASSERT_GT(static_cast<std::size_t>(range.size()) * made.info.layout.bytes_per_row(), k_band_bytes);
    const ScratchDir dir;
    for (const CheckpointKind kind : {CheckpointKind::hdf5, CheckpointKind::safetensors}) {
      const auto path = dir / (kind == CheckpointKind::hdf5 ? "t.h5" : "st");
      write_checkpoint(path, config, tables, {kind});
      const auto checkpoint = open_ple_checkpoint(path, config);
      const TableSource source = checkpoint->table_source(0);
      EXPECT_EQ(source.info.layout.format, c.format);
      EXPECT_EQ(source.chunk_rows > 0, kind == CheckpointKind::hdf5) << to_string(kind);
      for (StorageTier tier : {StorageTier::device, StorageTier::pinned}) {
        EXPECT_TRUE(table_bytes(GpuTable(made, range, tier)) == table_bytes(GpuTable(source, range, tier)))
            << to_string(c.format) << " " << to_string(kind) << " " << to_string(tier);
      }
    }
  }
}

// Distinct-row gathers key rows by 32-bit offsets: a pinned range they cannot key is refused
// when the table is made, before anything is allocated.
TEST_F(GpuTiers, PinnedRangesTooLargeForTheGatherAreRefusedAtOnce) {
  TableSource source = synthetic_tables(config_with("float8_e4m3fn", 64), RowFormat::fp8, 1).front();
  source.info.layout.rows = std::int64_t{1} << 33;
  try {
    const GpuTable table(source, {0, std::int64_t{1} << 32}, StorageTier::pinned);
    ADD_FAILURE() << "made";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("pinned tier: table 0: a rank's range of 4294967296 rows"), std::string::npos)
        << e.what();
  }
}

// The pinned tier's distinct-row gathers take, when reserved, the GPU memory that
// step_buffer_bytes() said (what the engine checks before allocating), measured by the
// device's free memory; and a lookup of as many ids as reserved takes no more.
TEST_F(GpuTiers, PinnedGatherTakesWhatItSaidWhenReserved) {
  // cudaMalloc hands out whole pages of up to 2 MiB: a few of them either way.
  constexpr std::int64_t slack = std::int64_t{8} << 20;
  const std::int64_t max_ids = std::int64_t{1} << 22;
  auto free_bytes = [] {
    PLESHARD_CUDA_CHECK(cudaDeviceSynchronize());
    std::size_t free = 0;
    std::size_t total = 0;
    PLESHARD_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return static_cast<std::int64_t>(free);
  };
  const std::pair<const char*, RowFormat> formats[] = {
      {nullptr, RowFormat::bf16}, {"nvfp4", RowFormat::nvfp4}, {"float8_e4m3fn", RowFormat::fp8_e8m0}};
  for (const auto& [dtype, format] : formats) {
    SCOPED_TRACE(to_string(format));
    const TableSource source = synthetic_tables(config_with(dtype, 4 * 160), format, 1).front();
    const GpuTable table(source, {0, source.info.layout.rows}, StorageTier::pinned);
    ASSERT_TRUE(table.gathers_distinct(max_ids));
    const auto said = static_cast<std::int64_t>(table.step_buffer_bytes(max_ids));
    EXPECT_GT(said, max_ids * 8);  // a key and an offset per id at least
    kernels::DeviceBuffer<std::int64_t> ids(static_cast<std::size_t>(max_ids));
    kernels::DeviceBuffer<std::uint8_t> out(static_cast<std::size_t>(max_ids) * 160 * 2);
    std::vector<std::int64_t> host_ids(static_cast<std::size_t>(max_ids));
    std::mt19937_64 rng(5);
    for (std::int64_t& id : host_ids)
      id = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(source.info.layout.rows));
    ids.copy_from_host(std::span<const std::int64_t>(host_ids));
    const std::int64_t before = free_bytes();
    table.reserve(max_ids);
    const std::int64_t reserved = free_bytes();
    EXPECT_NEAR(static_cast<double>(before - reserved), static_cast<double>(said), static_cast<double>(slack));
    table.lookup(ids.data(), max_ids, OutDtype::bf16, out.data(), nullptr);
    EXPECT_GE(free_bytes(), reserved - slack) << "the lookup took more than was reserved";
  }
}

// The pinned tier's host gathers, in both turns where steps begin ahead, take the
// page-locked host memory that step_host_bytes() said (what the engine checks against the
// node's memory before allocating), measured by the process's resident memory.
TEST_F(GpuTiers, PinnedHostGatherStagingTakesWhatItSaidWhenReserved) {
  constexpr std::int64_t slack = std::int64_t{16} << 20;  // the runtime's own pages
  const std::int64_t max_ids = std::int64_t{1} << 21;
  auto resident_bytes = [] {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("VmRSS:", 0) == 0) return static_cast<std::int64_t>(std::stoll(line.substr(6))) * 1024;
    return std::int64_t{0};
  };
  const TableSource source = synthetic_tables(config_with("float8_e4m3fn", 4 * 160), RowFormat::fp8_e8m0, 1).front();
  for (const int turns : {1, 2}) {
    SCOPED_TRACE(::testing::Message() << turns << " turns");
    PinnedReads reads;
    reads.host = HostReads::gather;
    const GpuTable table(source, {0, source.info.layout.rows}, StorageTier::pinned, reads);
    ASSERT_TRUE(table.gathers_on_host(max_ids, false));
    const auto said = static_cast<std::int64_t>(table.step_host_bytes(max_ids, turns));
    EXPECT_GT(said, turns * max_ids * 160);  // a row of 160 codes per id at least, per turn
    const std::int64_t before = resident_bytes();
    table.reserve(max_ids, turns);
    EXPECT_NEAR(static_cast<double>(resident_bytes() - before), static_cast<double>(said), static_cast<double>(slack));
  }
  PinnedReads uva;
  uva.host = HostReads::uva;
  const GpuTable through_uva(source, {0, source.info.layout.rows}, StorageTier::pinned, uva);
  EXPECT_EQ(through_uva.step_host_bytes(max_ids, 2), 0U);
}

TEST_F(GpuTiers, TablesOver4GiBAreAddressedIn64Bits) {
  using testing_support::LargeTable;
  const TableSource source = LargeTable::source();
  const std::vector<std::int64_t> ids = LargeTable::ids();
  const std::vector<std::uint16_t> expected = LargeTable::expected(ids);
  const std::size_t out_bytes = expected.size() * 2;
  for (StorageTier tier : {StorageTier::device, StorageTier::pinned}) {
    const GpuTable table(source, {0, LargeTable::rows}, tier);
    kernels::DeviceBuffer<std::int64_t> d_ids(ids.size());
    kernels::DeviceBuffer<std::uint8_t> d_out(out_bytes);
    d_ids.copy_from_host(std::span<const std::int64_t>(ids));
    table.lookup(d_ids.data(), static_cast<std::int64_t>(ids.size()), OutDtype::bf16, d_out.data(), nullptr);
    std::vector<std::uint16_t> got(expected.size());
    PLESHARD_CUDA_CHECK(cudaMemcpy(got.data(), d_out.data(), out_bytes, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, expected) << to_string(tier);
  }
}

}  // namespace
