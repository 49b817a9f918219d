// Bit-level decoders and encoders against references from the format definitions; FP8-E8M0
// rows (every code times every scale byte) through the decode core and the host lookup.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "format/encode.hpp"
#include "format/reference_formats.hpp"
#include "kernels/common/row_decode.hpp"
#include "kernels/host/lookup_host.hpp"

namespace {

using namespace pleshard;
namespace k = pleshard::kernels;

std::uint32_t bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

float from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

TEST(E4m3, AllCodesDecodeLikeTheDefinition) {
  int nans = 0;
  for (int c = 0; c < 256; ++c) {
    const double expected = reference::e4m3_value(static_cast<std::uint8_t>(c));
    const float got = k::decode_e4m3(static_cast<std::uint8_t>(c));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got)) << c;
      ++nans;
    } else {
      EXPECT_EQ(static_cast<double>(got), expected) << c;
      EXPECT_EQ(std::signbit(got), c >= 128) << c;  // -0 stays -0
    }
  }
  EXPECT_EQ(nans, 2);  // 0x7F and 0xFF; E4M3fn has no infinities
  EXPECT_EQ(k::decode_e4m3(0x7E), 448.0f);
  EXPECT_EQ(k::decode_e4m3(0x01), std::ldexp(1.0f, -9));
}

TEST(E2m1, AllCodesDecodeLikeTheTable) {
  for (int c = 0; c < 16; ++c)
    EXPECT_EQ(static_cast<double>(k::decode_e2m1(static_cast<std::uint8_t>(c))),
              reference::e2m1_value(static_cast<std::uint8_t>(c)))
        << c;
  EXPECT_EQ(k::decode_e2m1(0x17), 6.0f) << "only the low nibble counts";
}

TEST(E8m0, AllScaleBytesDecodeLikeTheDefinition) {
  for (int s = 0; s < 255; ++s)
    EXPECT_EQ(static_cast<double>(k::decode_e8m0(static_cast<std::uint8_t>(s))),
              reference::e8m0_value(static_cast<std::uint8_t>(s)))
        << s;
  EXPECT_TRUE(std::isnan(k::decode_e8m0(255)));
  EXPECT_EQ(bits(k::decode_e8m0(0)), 0x00400000u) << "2^-127 is a float32 subnormal, kept";
  EXPECT_EQ(bits(k::decode_e8m0(1)), 0x00800000u);
  EXPECT_EQ(k::decode_e8m0(127), 1.0f);
  EXPECT_EQ(bits(k::decode_e8m0(254)), 0x7F000000u);
}

// One FP8-E8M0 table of 256 rows of 256 values: row r holds every E4M3 code in order, each
// block of 32 scaled by the byte r. Decoded values compare bit for bit with the reference
// (NaNs by isnan): signed zeros, float32 subnormals (scale bytes 0, 1, 2 and E4M3's own
// subnormals), infinities past float32's range (254).
struct EveryCodeEveryScale {
  static constexpr int k_dim = 256;
  EveryCodeEveryScale() : rows(256 * k_dim), scales(256 * k_dim / 32) {
    for (int r = 0; r < 256; ++r) {
      for (int c = 0; c < k_dim; ++c) rows[r * k_dim + c] = static_cast<std::uint8_t>(c);
      for (int b = 0; b < k_dim / 32; ++b) scales[r * k_dim / 32 + b] = static_cast<std::uint8_t>(r);
    }
  }
  [[nodiscard]] k::TableView view() const {
    return {RowFormat::fp8_e8m0, k_dim, 0, 256, rows.data(), scales.data(), 1.0f};
  }
  std::vector<std::uint8_t> rows;
  std::vector<std::uint8_t> scales;
};

void expect_same_float(float got, float expected, const std::string& what) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(got)) << what;
  } else {
    EXPECT_EQ(bits(got), bits(expected)) << what << ": " << got << " vs " << expected;
  }
}

TEST(Fp8E8m0, EveryCodeTimesEveryScaleByteDecodesLikeTheReference) {
  const EveryCodeEveryScale table;
  const k::TableView view = table.view();
  std::vector<float> row(EveryCodeEveryScale::k_dim);
  for (int s = 0; s < 256; ++s) {
    const auto scale = static_cast<std::uint8_t>(s);
    k::decode_row(view, s, k::OutDtype::f32, row.data(), 0);
    for (int c = 0; c < 256; ++c) {
      const auto code = static_cast<std::uint8_t>(c);
      const std::string what = "code " + std::to_string(c) + " scale byte " + std::to_string(s);
      const float expected = reference::fp8_e8m0_value(code, scale);
      expect_same_float(row[c], expected, what + " (decode_row)");
      expect_same_float(k::decode_value(view, view.row_at(s), view.scales_at(s), c), expected,
                        what + " (decode_value)");
    }
  }
  // The edges by name: NaN codes and scale 255, float32 subnormals not flushed to zero.
  for (const std::uint8_t s : {0, 1, 2, 126, 127, 128, 254, 255}) {
    k::decode_row(view, s, k::OutDtype::f32, row.data(), 0);
    EXPECT_TRUE(std::isnan(row[0x7F]) && std::isnan(row[0xFF])) << int{s};
    if (s == 255) {
      EXPECT_TRUE(std::all_of(row.begin(), row.end(), [](float v) { return std::isnan(v); }));
    } else {
      EXPECT_EQ(bits(row[0x00]), 0u) << int{s};
      EXPECT_EQ(bits(row[0x80]), 0x80000000u) << int{s} << ": -0 stays -0";
      for (int c = 1; c < 8; ++c)  // E4M3 subnormals: c * 2^-9 * 2^(s - 127), never 0
        EXPECT_EQ(static_cast<double>(row[c]), std::ldexp(static_cast<double>(c), s - 136)) << c << " " << int{s};
    }
  }
  k::decode_row(view, 0, k::OutDtype::f32, row.data(), 0);
  EXPECT_EQ(bits(row[0x01]), 0x2000u) << "2^-9 * 2^-127 = 2^-136, the float32 subnormal 2^13 * 2^-149";
  EXPECT_EQ(bits(row[0x7E]), bits(std::ldexp(448.0f, -127)));
  k::decode_row(view, 254, k::OutDtype::f32, row.data(), 0);
  EXPECT_EQ(row[0x7E], INFINITY) << "448 * 2^127 is past float32's range";
  EXPECT_EQ(row[0x38], std::ldexp(1.0f, 127));
}

// Whole rows through the host tier's lookup (the Kokkos kernel), every output dtype: the
// float32 value rounded once (bfloat16 by the encoder tested above, float16 by the
// compiler's own conversion), zeros for ids outside the table.
TEST(Fp8E8m0, HostLookupsRoundOnceToEveryOutputDtype) {
  const EveryCodeEveryScale table;
  k::TableView view = table.view();
  view.row_begin = 1000;  // the table's rows are ids 1000..1255
  view.row_end = 1256;
  constexpr int dim = EveryCodeEveryScale::k_dim;
  std::mt19937 rng(5);
  std::vector<std::int64_t> ids(600);
  for (auto& id : ids) id = 990 + static_cast<std::int64_t>(rng() % 280);  // some outside
  for (const std::uint8_t s : {0, 1, 2, 126, 127, 128, 254, 255}) ids.push_back(1000 + s);
  std::vector<std::uint8_t> out(ids.size() * dim * 4);
  for (const OutDtype dtype : {OutDtype::f32, OutDtype::bf16, OutDtype::f16}) {
    SCOPED_TRACE(to_string(dtype));
    std::fill(out.begin(), out.end(), 0xA5);
    k::lookup_rows_host(view, ids.data(), static_cast<std::int64_t>(ids.size()), dtype, out.data());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const bool owned = ids[i] >= 1000 && ids[i] < 1256;
      for (int c = 0; c < dim; ++c) {
        const float expected =
            owned ? reference::fp8_e8m0_value(static_cast<std::uint8_t>(c), static_cast<std::uint8_t>(ids[i] - 1000))
                  : 0.0f;
        const std::size_t at = i * dim + static_cast<std::size_t>(c);
        if (dtype == OutDtype::f32) {
          float got;
          std::memcpy(&got, out.data() + at * 4, 4);
          if (std::isnan(expected)) {
            ASSERT_TRUE(std::isnan(got)) << ids[i] << " " << c;
          } else {
            ASSERT_EQ(bits(got), bits(expected)) << ids[i] << " " << c;
          }
          continue;
        }
        std::uint16_t got;
        std::memcpy(&got, out.data() + at * 2, 2);
        if (dtype == OutDtype::bf16) {
          if (std::isnan(expected)) {
            ASSERT_GT(got & 0x7FFF, 0x7F80) << ids[i] << " " << c;
          } else {
            ASSERT_EQ(got, k::encode_bf16(expected)) << ids[i] << " " << c;
          }
        } else {
          const _Float16 half = static_cast<_Float16>(expected);
          std::uint16_t half_bits;
          std::memcpy(&half_bits, &half, 2);
          if (std::isnan(expected)) {
            ASSERT_GT(got & 0x7FFF, 0x7C00) << ids[i] << " " << c;
          } else {
            ASSERT_EQ(got, half_bits) << ids[i] << " " << c;
          }
        }
      }
    }
  }
}

// Brute-force nearest code, ties to the even code: the encoders' reference.
std::uint8_t nearest_code(double x, int codes, double (*value)(std::uint8_t), std::uint8_t sign_bit) {
  const std::uint8_t sign = std::signbit(x) ? sign_bit : 0;
  const double m = std::fabs(x);
  int best = 0;
  for (int c = 1; c < codes; ++c) {
    const double v = value(static_cast<std::uint8_t>(c));
    if (std::isnan(v)) continue;
    const double d_c = std::fabs(m - v);
    const double d_best = std::fabs(m - value(static_cast<std::uint8_t>(best)));
    if (d_c < d_best || (d_c == d_best && c % 2 == 0)) best = c;
  }
  return static_cast<std::uint8_t>(sign | best);
}

TEST(E4m3, EncoderRoundsToNearestEvenAndSaturates) {
  std::vector<float> xs = {
      0.0f,  -0.0f, 448.0f, 449.0f, 464.0f, 480.0f, 1e9f, -1e9f, std::ldexp(1.0f, -10), std::ldexp(1.0f, -9) * 1.5f,
      1e-30f};
  // Every midpoint between neighbouring codes, and a little either side.
  for (int c = 0; c < 126; ++c) {
    const double mid = (reference::e4m3_value(static_cast<std::uint8_t>(c)) +
                        reference::e4m3_value(static_cast<std::uint8_t>(c + 1))) /
                       2;
    for (float x : {static_cast<float>(mid), std::nextafter(static_cast<float>(mid), 0.0f),
                    std::nextafter(static_cast<float>(mid), 1e9f)}) {
      xs.push_back(x);
      xs.push_back(-x);
    }
  }
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 100.0f);
  for (int i = 0; i < 20000; ++i) xs.push_back(normal(rng));
  for (float x : xs) ASSERT_EQ(encode_e4m3(x), nearest_code(x, 127, reference::e4m3_value, 0x80)) << x;
  EXPECT_EQ(encode_e4m3(std::nanf("")) & 0x7F, 0x7F);
}

// Every binade the encoder's integer paths see: random bit patterns of all finite floats.
TEST(E4m3, EncoderMatchesTheReferenceOnRandomFloats) {
  std::mt19937 rng(11);
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t b = rng();
    float x;
    std::memcpy(&x, &b, sizeof x);
    if (!std::isfinite(x)) continue;
    ASSERT_EQ(encode_e4m3(x), nearest_code(x, 127, reference::e4m3_value, 0x80)) << x;
    // Where the codes are: magnitudes below 512.
    const float y = std::ldexp(static_cast<float>(b >> 8) * 0x1p-24f, static_cast<int>(b % 26) - 16);
    ASSERT_EQ(encode_e4m3(y), nearest_code(y, 127, reference::e4m3_value, 0x80)) << y;
  }
}

// The E8M0 scale of a block: the smallest power of two 2^e with amax <= 448 * 2^e (e within
// [-127, 127]), found by search in double; zero and NaN get 2^0.
std::uint8_t reference_e8m0_scale(float amax) {
  if (amax == 0 || std::isnan(amax)) return 127;
  int e = -127;
  while (e < 127 && static_cast<double>(amax) > std::ldexp(448.0, e)) ++e;
  return static_cast<std::uint8_t>(e + 127);
}

TEST(E8m0, ScaleEncoderTakesTheSmallestPowerOfTwoThatHoldsTheBlock) {
  std::vector<float> amaxes = {0.0f,
                               1.0f,
                               448.0f,
                               449.0f,
                               224.0f,
                               0.04f,
                               1e-30f,
                               1e-40f,
                               3e38f,
                               INFINITY,
                               std::numeric_limits<float>::denorm_min()};
  for (int e = -140; e < 128; ++e)
    for (const double m : {1.0, 1.75, 1.5, 1.875})
      if (const float x = static_cast<float>(std::ldexp(m, e)); std::isfinite(x) && x > 0)
        for (const float y : {x, std::nextafter(x, 0.0f), std::nextafter(x, INFINITY)}) amaxes.push_back(y);
  std::mt19937 rng(21);
  for (int i = 0; i < 100000; ++i) amaxes.push_back(std::fabs(from_bits(static_cast<std::uint32_t>(rng()))));
  for (const float amax : amaxes) {
    if (std::isinf(amax)) continue;
    ASSERT_EQ(encode_e8m0_scale(amax), reference_e8m0_scale(amax)) << amax;
  }
  EXPECT_EQ(encode_e8m0_scale(448.0f), 127);
  EXPECT_EQ(encode_e8m0_scale(std::nextafter(448.0f, 1e9f)), 128);
  EXPECT_EQ(encode_e8m0_scale(0.0f), 127);
  EXPECT_EQ(encode_e8m0_scale(std::nanf("")), 127);
  EXPECT_EQ(encode_e8m0_scale(1e-40f), 0);      // 2^-127 holds every float32 subnormal
  EXPECT_LT(encode_e8m0_scale(INFINITY), 255);  // never the NaN byte
}

// Each code of an encoded FP8-E8M0 block is the nearest E4M3 (ties to even, saturating) to
// the value over the block's scale, and the block's largest value is within 448 of it.
TEST(Fp8E8m0, BlockEncoderRoundsEachValueOverTheScaleToTheNearestE4m3) {
  std::mt19937 rng(13);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  constexpr int dim = 64;
  std::vector<float> values(dim);
  std::vector<std::uint8_t> codes(dim), scales(dim / 32);
  for (int trial = 0; trial < 3000; ++trial) {
    const float spread = std::ldexp(1.0f, static_cast<int>(rng() % 200) - 120);
    for (float& v : values) v = normal(rng) * spread;
    if (trial % 7 == 0) values[rng() % dim] = 0.0f;
    if (trial % 11 == 0) std::fill(values.begin(), values.begin() + 32, 0.0f);  // an all-zero block
    encode_row(RowFormat::fp8_e8m0, values, 1.0f, codes, scales);
    for (int b = 0; b < dim / 32; ++b) {
      float amax = 0;
      for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(values[b * 32 + i]));
      ASSERT_EQ(scales[b], reference_e8m0_scale(amax)) << amax;
      for (int i = 0; i < 32; ++i) {
        const double over = std::ldexp(static_cast<double>(values[b * 32 + i]), 127 - scales[b]);
        ASSERT_LE(std::fabs(over), 448.0);
        ASSERT_EQ(codes[b * 32 + i], nearest_code(over, 127, reference::e4m3_value, 0x80)) << over;
      }
    }
  }
}

TEST(E2m1, EncoderRoundsToNearestEvenAndSaturates) {
  std::vector<float> xs = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 7.0f, 100.0f, -0.0f};
  for (int i = 0; i <= 1400; ++i) xs.push_back(-7.0f + 0.01f * static_cast<float>(i));
  for (float x : xs) ASSERT_EQ(encode_e2m1(x), nearest_code(x, 8, reference::e2m1_value, 0x8)) << x;
}

TEST(Bf16, DecodeIsExactAndEncodeRoundsTiesToEven) {
  for (std::uint32_t h = 0; h < 0x10000; h += 7) {
    const float f = k::decode_bf16(static_cast<std::uint16_t>(h));
    EXPECT_EQ(bits(f), h << 16);
    if (!std::isnan(f)) {
      EXPECT_EQ(k::encode_bf16(f), h);
    }
  }
  // 1 + 2^-8 lies halfway between 1 (even) and 1 + 2^-7: down to 1.
  EXPECT_EQ(k::encode_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even): up.
  EXPECT_EQ(k::encode_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(k::encode_bf16(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.0f)), 0x3F81);
  EXPECT_EQ(k::encode_bf16(from_bits(0x7F7FFFFF)), 0x7F80) << "overflow rounds to infinity";
  EXPECT_EQ(k::encode_bf16(-INFINITY), 0xFF80);
  EXPECT_TRUE(std::isnan(k::decode_bf16(k::encode_bf16(std::nanf("")))));
  EXPECT_TRUE(std::isnan(k::decode_bf16(k::encode_bf16(from_bits(0x7F800001)))))
      << "a NaN whose payload sits in the low bits must not become infinity";
}

TEST(F16, AgreesWithTheCompilersHalfType) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    _Float16 half;
    const auto h16 = static_cast<std::uint16_t>(h);
    std::memcpy(&half, &h16, sizeof half);
    const float expected = static_cast<float>(half);
    const float got = k::decode_f16(h16);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(got)) << h;
    } else {
      ASSERT_EQ(bits(got), bits(expected)) << h;
    }
  }
  std::mt19937 rng(9);
  std::vector<float> xs = {65504.0f,
                           65519.99f,
                           65520.0f,
                           1e6f,
                           std::ldexp(1.0f, -24),
                           std::ldexp(1.0f, -25),
                           std::ldexp(1.5f, -25),
                           std::ldexp(1.0f, -26),
                           std::ldexp(1.0f, -14),
                           std::ldexp(1.0f, -15) * 3,
                           0.0f,
                           -0.0f,
                           INFINITY,
                           -INFINITY};
  for (int i = 0; i < 200000; ++i) xs.push_back(from_bits(static_cast<std::uint32_t>(rng())));
  for (float x : xs) {
    if (std::isnan(x)) continue;
    const _Float16 expected = static_cast<_Float16>(x);
    std::uint16_t expected_bits;
    std::memcpy(&expected_bits, &expected, sizeof expected_bits);
    ASSERT_EQ(k::encode_f16(x), expected_bits) << x;
  }
  EXPECT_EQ(k::encode_f16(std::nanf("")) & 0x7E00, 0x7E00);
}

// Gaussian rows survive a quantize/decode round trip within the formats' error bounds.
TEST(RoundTrip, GaussianRowsStayWithinBounds) {
  constexpr int dim = 160;
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> table(200 * dim);
  for (float& v : table) v = normal(rng);
  float amax = 0;
  for (float v : table) amax = std::max(amax, std::fabs(v));

  for (RowFormat format :
       {RowFormat::f32, RowFormat::bf16, RowFormat::f16, RowFormat::fp8, RowFormat::nvfp4, RowFormat::fp8_e8m0}) {
    const float global = format == RowFormat::fp8     ? fp8_global_scale(amax)
                         : format == RowFormat::nvfp4 ? nvfp4_global_scale(amax)
                                                      : 1.0f;
    std::vector<std::uint8_t> row(k::stored_row_bytes(format, dim));
    std::vector<std::uint8_t> scales(k::scale_row_bytes(format, dim));
    double err2 = 0;
    double ref2 = 0;
    for (int r = 0; r < 200; ++r) {
      const std::span<const float> values(table.data() + r * dim, dim);
      encode_row(format, values, global, row, scales);
      const k::TableView view{format, dim, 0, 1, row.data(), scales.data(), global};
      for (int j = 0; j < dim; ++j) {
        const float x = values[j];
        const float y = k::decode_value(view, row.data(), scales.data(), j);
        const float e = std::fabs(x - y);
        err2 += double(e) * e;
        ref2 += double(x) * x;
        switch (format) {
          case RowFormat::f32:
            ASSERT_EQ(x, y);
            break;
          case RowFormat::bf16:
            ASSERT_LE(e, std::fabs(x) * std::ldexp(1.0f, -8));
            break;
          case RowFormat::f16:
            ASSERT_LE(e, std::fabs(x) * std::ldexp(1.0f, -11) + 3e-8f);
            break;
          case RowFormat::fp8:
            ASSERT_LE(e, std::fabs(x) * 0.0625f + global * std::ldexp(1.0f, -10) * 1.0001f) << x;
            break;
          case RowFormat::nvfp4: {
            const float block_scale = k::decode_e4m3(scales[j / 16]) * global;
            ASSERT_LE(e, block_scale * 1.0001f) << x;  // half of E2M1's widest step (2)
            break;
          }
          case RowFormat::fp8_e8m0: {
            // Half an E4M3 step: 2^-4 of the value, or 2^-10 of the block scale below 2^-6.
            const double block_scale = reference::e8m0_value(scales[j / 32]);
            ASSERT_LE(e, std::fabs(x) * 0.0625 + block_scale * std::ldexp(1.0, -10)) << x;
            break;
          }
        }
      }
    }
    const double relative_rms = std::sqrt(err2 / ref2);
    const double limit = format == RowFormat::nvfp4                                  ? 0.15
                         : format == RowFormat::fp8 || format == RowFormat::fp8_e8m0 ? 0.04
                                                                                     : 1e-2;
    EXPECT_LT(relative_rms, limit) << to_string(format);
  }
}

TEST(DecodeRow, RoundsOnceToTheOutputDtypeAndZeroesForeignRows) {
  // One nvfp4 row whose float32 value is not representable in bf16, checked against the
  // reference: (e2m1 * block scale) * global in float, then one rounding.
  constexpr int dim = 32;
  std::vector<std::uint8_t> row(dim / 2), scales(dim / 16);
  for (int i = 0; i < dim / 2; ++i) row[i] = static_cast<std::uint8_t>(0x10 * (i % 16) + (15 - i % 16));
  scales = {0x3B, 0x45};
  const float global = 0.0123f;
  const k::TableView view{RowFormat::nvfp4, dim, 100, 101, row.data(), scales.data(), global};
  std::vector<std::uint16_t> out(2 * dim, 0xFFFF);
  k::decode_row(view, 100, k::OutDtype::bf16, out.data(), 0);
  k::decode_row(view, 101, k::OutDtype::bf16, out.data(), dim);
  for (int j = 0; j < dim; ++j) {
    const std::uint8_t nibble = (j % 2 == 0) ? row[j / 2] & 0xF : row[j / 2] >> 4;
    const float expected = (static_cast<float>(reference::e2m1_value(nibble)) *
                            static_cast<float>(reference::e4m3_value(scales[j / 16]))) *
                           global;
    EXPECT_EQ(out[j], k::encode_bf16(expected)) << j;
    EXPECT_EQ(out[dim + j], 0) << "id outside the view must give +0";
  }
}

}  // namespace
