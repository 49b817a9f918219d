// Bit-level decoders and encoders against references from the format definitions.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "format/encode.hpp"
#include "format/reference_formats.hpp"
#include "kernels/common/row_decode.hpp"

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

  for (RowFormat format : {RowFormat::f32, RowFormat::bf16, RowFormat::f16, RowFormat::fp8, RowFormat::nvfp4}) {
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
        }
      }
    }
    const double relative_rms = std::sqrt(err2 / ref2);
    const double limit = format == RowFormat::nvfp4 ? 0.15 : format == RowFormat::fp8 ? 0.04 : 1e-2;
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
