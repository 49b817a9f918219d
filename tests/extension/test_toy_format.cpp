// A row format added by files of this folder alone (int8_row_format.cpp: int8 codes with a
// float32 scale per row), with no edit of the library: its name is known and listed, its
// rows encode and decode through the library's functions, and a native checkpoint of it is
// made, read and embedded on the host tier, every value the plain decode below gives. GPU
// tiers refuse it in one line.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/ple_checkpoint.hpp"
#include "ckpt/synthetic.hpp"
#include "core/error.hpp"
#include "engine/embed.hpp"
#include "exec/step_space.hpp"
#include "extension/int8_row_format.hpp"
#include "format/encode.hpp"
#include "format/row_anomalies.hpp"
#include "format/row_format.hpp"
#include "hash/ngram_ids.hpp"
#include "hash/random_batches.hpp"
#include "kernels/common/row_decode.hpp"
#include "store/row_store_factory.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

// The format's definition, written plainly: a little-endian float32 scale, then int8 codes.
float plain_value(const std::uint8_t* row, int j) {
  float scale;
  std::memcpy(&scale, row, 4);
  return static_cast<float>(static_cast<std::int8_t>(row[4 + j])) * scale;
}

TEST(ToyFormat, IsKnownByItsNamesAndListedWithTheBuiltInOnes) {
  const RowFormat toy = int8_row::format();
  EXPECT_EQ(parse_row_format("int8_row"), toy);
  EXPECT_EQ(parse_row_format("int8-row"), toy);
  EXPECT_EQ(std::string(to_string(toy)), "int8_row");
  EXPECT_EQ(row_format_names(), "f32, bf16, f16, fp8, nvfp4, fp8_e8m0 or int8_row");
  try {
    (void)parse_row_format("int4");
    ADD_FAILURE() << "int4 parsed";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "row format \"int4\": expected f32, bf16, f16, fp8, nvfp4, fp8_e8m0 or int8_row");
  }
  EXPECT_TRUE(format_matches_config(toy, TableQuantization::none));
  EXPECT_FALSE(format_matches_config(toy, TableQuantization::nvfp4));
  EXPECT_FALSE(describe(toy).device_kernels);
  EXPECT_TRUE(describe(RowFormat::nvfp4).device_kernels);
}

TEST(ToyFormat, RowsEncodeAndDecodeThroughTheLibrary) {
  const RowFormat toy = int8_row::format();
  constexpr int head_dim = 48;
  const TableLayout layout{toy, head_dim, 3};
  EXPECT_EQ(layout.row_bytes(), 4u + head_dim);
  EXPECT_EQ(layout.scale_bytes(), 0u);
  EXPECT_FALSE(kernels::has_global_scale(toy));

  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-0.04f, 0.04f);
  std::vector<float> values(head_dim);
  for (float& v : values) v = uniform(rng);
  values[7] = 0.05f;  // the row's amax: scale 0.05 / 127
  std::vector<std::uint8_t> rows(3 * layout.row_bytes(), 0xEE);
  encode_row(toy, values, 1.0f, std::span(rows).subspan(layout.row_bytes(), layout.row_bytes()), {});

  float scale;
  std::memcpy(&scale, rows.data() + layout.row_bytes(), 4);
  EXPECT_FLOAT_EQ(scale, 0.05f / 127.0f);
  // The shared decode (every host tier's) reaches the format through its hooks: rows 1 of
  // [1, 2) in the view; ids outside it are zeros.
  const kernels::TableView view{toy, head_dim, 1, 2, rows.data() + layout.row_bytes(), nullptr, 1.0f, 0, 0};
  std::vector<float> out(2 * head_dim, -1.0f);
  kernels::decode_row(view, 1, OutDtype::f32, out.data(), 0);
  kernels::decode_row(view, 5, OutDtype::f32, out.data(), head_dim);
  for (int j = 0; j < head_dim; ++j) {
    EXPECT_EQ(out[j], plain_value(rows.data() + layout.row_bytes(), j)) << j;
    EXPECT_NEAR(out[j], values[j], scale / 2) << j;
    EXPECT_EQ(out[head_dim + j], 0.0f);
    EXPECT_EQ(kernels::decode_value(view, view.row_at(0), nullptr, j), out[j]);
  }
  EXPECT_EQ(out[7], 0.05f);
  std::vector<std::uint16_t> bf16(head_dim);
  kernels::decode_row(view, 1, OutDtype::bf16, bf16.data(), 0);
  for (int j = 0; j < head_dim; ++j) EXPECT_EQ(bf16[j], kernels::encode_bf16(out[j])) << j;
  // Its anomaly rule: int8 codes are never NaN.
  EXPECT_FALSE(scan_rows(layout, 0, 1, std::span(rows).subspan(layout.row_bytes(), layout.row_bytes()), {}).any());
}

TEST(ToyFormat, ANativeCheckpointOfItEmbedsOnTheHostTier) {
  const RowFormat toy = int8_row::format();
  const ScratchDir dir;
  const ModelConfig config = small_config();  // unquantized: the format's config
  write_checkpoint(dir / "toy.h5", config, synthetic_tables(config, toy, 77), {CheckpointKind::hdf5});
  const auto h5 = open_ple_checkpoint(dir / "toy.h5", load_checkpoint_config(dir / "toy.h5"));
  h5->verify_data({});

  std::mt19937_64 rng(8);
  TokenBatch batch(config.ngram_size);
  for (const auto& r : random_requests(rng, config, 6, 30)) batch.add_request(r.tokens, r.context);
  const auto embedded = embed_batch(config, *h5, batch, OutDtype::f32, StorageTier::host);
  ASSERT_EQ(embedded.size(), static_cast<std::size_t>(config.num_ple_layers()));
  for (int d = 0; d < config.num_ple_layers(); ++d) {
    const PleTableInfo& info = h5->table(d);
    ASSERT_EQ(info.layout.format, toy);
    const int head_dim = info.layout.head_dim;
    const auto ids = compute_ngram_ids(derive_table_spec(config, d), batch);
    const float* out = reinterpret_cast<const float*>(embedded[static_cast<std::size_t>(d)].data.data());
    std::vector<std::uint8_t> row(info.layout.row_bytes());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      h5->read_rows(d, ids[i], ids[i] + 1, row, {});
      float scale;
      std::memcpy(&scale, row.data(), 4);
      for (int j = 0; j < head_dim; ++j) {
        const float got = out[i * static_cast<std::size_t>(head_dim) + static_cast<std::size_t>(j)];
        ASSERT_EQ(got, plain_value(row.data(), j)) << "layer " << d << " id " << ids[i] << " col " << j;
        ASSERT_NEAR(got, synthetic_value(77, d, ids[i], j), scale / 2) << "layer " << d << " id " << ids[i];
      }
    }
  }
}

TEST(ToyFormat, GpuTiersRefuseItInOneLine) {
  const ModelConfig config = small_config();
  const auto checkpoint = synthetic_checkpoint(config, int8_row::format(), 3);
  const auto space = make_host_space();
  std::vector<RowRange> ranges;
  for (const PleTableInfo& info : checkpoint->tables()) ranges.push_back({0, info.layout.rows});
  for (const StorageTier tier : {StorageTier::device, StorageTier::pinned}) {
    try {
      (void)make_row_store(tier, *checkpoint, ranges, *space);
      ADD_FAILURE() << to_string(tier) << ": not refused";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), "--storage " + std::string(to_string(tier)) +
                                           ": format int8_row has no GPU kernel (the host tier serves it)");
    }
  }
  EXPECT_NO_THROW((void)make_row_store(StorageTier::host, *checkpoint, ranges, *space));
}

}  // namespace
