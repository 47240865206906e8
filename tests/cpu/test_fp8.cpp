// The host e4m3 codec (core/fp8.hpp) against the OCP FP8 E4M3 definition
// written out independently here: every one of the 256 codes decodes to
// (-1)^s x 2^(e-7) x (1 + m/8) (subnormals 2^-6 x m/8, 0x7F/0xFF NaN);
// encoding round-trips every non-NaN code, rounds ties to even at every
// midpoint, saturates to +-448 (infinities too), sends NaN to 0x7F and keeps
// -0; the per-tensor scale is amax/448. tests/python/test_fp8_codec.py checks
// both directions against ml_dtypes / torch.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "core/fp8.hpp"

using namespace attnbench;

namespace {

// The definition, by formula (std::pow, no bit tricks shared with core/fp8.cpp).
double e4m3_by_definition(int code) {
  const int s = code >> 7, e = (code >> 3) & 15, m = code & 7;
  if (e == 15 && m == 7) return std::numeric_limits<double>::quiet_NaN();
  const double mag = e == 0 ? std::pow(2.0, -6) * (m / 8.0) : std::pow(2.0, e - 7) * (1.0 + m / 8.0);
  return s ? -mag : mag;
}

bool is_nan_code(int c) { return (c & 0x7F) == 0x7F; }

// The finite e4m3 values in increasing order, with their (positive-sign) codes.
std::vector<std::pair<double, int>> positive_ladder() {
  std::vector<std::pair<double, int>> v;
  for (int c = 0; c < 0x7F; ++c) v.push_back({e4m3_by_definition(c), c});
  return v;
}

}  // namespace

TEST(fp8, every_code_decodes_to_its_definition) {
  int nans = 0;
  std::set<float> finite;
  for (int c = 0; c < 256; ++c) {
    const float got = e4m3_to_float(static_cast<std::uint8_t>(c));
    const double want = e4m3_by_definition(c);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << c;
      ++nans;
      continue;
    }
    EXPECT_EQ(static_cast<double>(got), want) << "code 0x" << std::hex << c;
    EXPECT_EQ(std::signbit(got), c >= 0x80) << c;  // -0 is 0x80
    finite.insert(got);
  }
  EXPECT_EQ(nans, 2);              // 0x7F and 0xFF only: no infinities
  EXPECT_EQ(finite.size(), 253u);  // 254 finite codes, +0 == -0
  EXPECT_EQ(e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(e4m3_to_float(0xFE), -448.0f);
  EXPECT_EQ(e4m3_to_float(0x08), std::ldexp(1.0f, -6));      // smallest normal
  EXPECT_EQ(e4m3_to_float(0x07), 7 * std::ldexp(1.0f, -9));  // largest subnormal
  EXPECT_EQ(e4m3_to_float(0x01), std::ldexp(1.0f, -9));      // smallest subnormal
  EXPECT_EQ(e4m3_max, 448.0f);
}

TEST(fp8, encode_round_trips_every_code) {
  for (int c = 0; c < 256; ++c) {
    if (is_nan_code(c)) continue;
    EXPECT_EQ(e4m3_from_float(e4m3_to_float(static_cast<std::uint8_t>(c))), c) << "code 0x" << std::hex << c;
  }
}

TEST(fp8, zero_and_negative_zero) {
  EXPECT_EQ(e4m3_from_float(0.0f), 0x00);
  EXPECT_EQ(e4m3_from_float(-0.0f), 0x80);
  EXPECT_EQ(e4m3_round(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(e4m3_round(-0.0f)));
  // Below half the smallest subnormal (2^-10) rounds to a zero of the same sign; 2^-10 itself
  // is a tie between 0 (even) and 2^-9: 0.
  EXPECT_EQ(e4m3_from_float(std::ldexp(1.0f, -11)), 0x00);
  EXPECT_EQ(e4m3_from_float(-std::ldexp(1.0f, -11)), 0x80);
  EXPECT_EQ(e4m3_from_float(std::ldexp(1.0f, -10)), 0x00);
  EXPECT_EQ(e4m3_from_float(std::nextafter(std::ldexp(1.0f, -10), 1.0f)), 0x01);
  EXPECT_EQ(e4m3_from_float(std::numeric_limits<float>::denorm_min()), 0x00);
}

TEST(fp8, midpoints_round_to_even_and_neighbours_to_nearest) {
  // Every pair of adjacent finite values (subnormal, subnormal/normal boundary, binade
  // edges), both signs: the midpoint goes to the even code, a float either side of it
  // goes to the nearer value.
  const auto ladder = positive_ladder();
  int ties = 0;
  for (std::size_t i = 0; i + 1 < ladder.size(); ++i) {
    const auto [lo, lo_code] = ladder[i];
    const auto [hi, hi_code] = ladder[i + 1];
    const float mid = static_cast<float>((lo + hi) / 2);  // exact in float (a few bits)
    ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2);
    const int even = (lo_code & 1) == 0 ? lo_code : hi_code;
    for (int sign : {0, 0x80}) {
      const float m = sign ? -mid : mid;
      EXPECT_EQ(e4m3_from_float(m), even | sign) << "midpoint " << m;
      EXPECT_EQ(e4m3_from_float(std::nextafter(m, 0.0f)), lo_code | sign) << m;
      EXPECT_EQ(e4m3_from_float(std::nextafter(m, sign ? -1000.0f : 1000.0f)), hi_code | sign) << m;
      ++ties;
    }
  }
  EXPECT_EQ(ties, 2 * 126);
  // Named cases: the subnormal/normal boundary (7.5 x 2^-9 -> 0x08, the even one) and a
  // binade edge (1.9375 = midpoint of 1.875 and 2 -> 2, code 0x40).
  EXPECT_EQ(e4m3_from_float(7.5f * std::ldexp(1.0f, -9)), 0x08);
  EXPECT_EQ(e4m3_from_float(6.5f * std::ldexp(1.0f, -9)), 0x06);
  EXPECT_EQ(e4m3_from_float(1.9375f), 0x40);
  EXPECT_EQ(e4m3_from_float(1.0625f), 0x38);  // 1 + 1/16: tie, 1.0 even
  EXPECT_EQ(e4m3_from_float(1.1875f), 0x3A);  // 1.125 + 1/16: tie, 1.25 even
}

TEST(fp8, saturates_beyond_448_and_sends_nan_to_0x7f) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {448.0f, 449.0f, 464.0f, 479.9f, 480.0f, 1e6f, std::numeric_limits<float>::max(), inf}) {
    EXPECT_EQ(e4m3_from_float(x), 0x7E) << x;
    EXPECT_EQ(e4m3_from_float(-x), 0xFE) << x;
  }
  EXPECT_EQ(e4m3_round(inf), 448.0f);
  EXPECT_EQ(e4m3_from_float(std::nextafter(448.0f, 0.0f)), 0x7E);
  EXPECT_EQ(e4m3_from_float(432.0f), 0x7E);  // midpoint of 416 and 448: 448 (code 0x7E even)
  EXPECT_EQ(e4m3_from_float(std::nextafter(432.0f, 0.0f)), 0x7D);
  EXPECT_EQ(e4m3_from_float(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(e4m3_from_float(-std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_TRUE(std::isnan(e4m3_round(std::numeric_limits<float>::quiet_NaN())));
}

TEST(fp8, dense_sweep_matches_nearest_by_search) {
  // Every float32 with a 12-bit mantissa prefix between 2^-12 and 512 (~ 2 x 85k values):
  // the encoder's code is a nearest value found by brute force, ties to the even code.
  const auto ladder = positive_ladder();
  std::int64_t checked = 0;
  for (int e = -12; e <= 9; ++e)
    for (int f = 0; f < 4096; ++f) {
      const float x = std::ldexp(1.0f + f / 4096.0f, e);
      double best = INFINITY;
      int code = -1;
      for (const auto& [v, c] : ladder) {
        const double d = std::fabs(v - x);
        if (d < best || (d == best && (c & 1) == 0)) best = d, code = c;
      }
      if (x >= 448.0f) code = 0x7E;
      ASSERT_EQ(e4m3_from_float(x), code) << x;
      ASSERT_EQ(e4m3_from_float(-x), code | 0x80) << x;
      checked += 2;
    }
  EXPECT_EQ(checked, 2 * 22 * 4096);
}

TEST(fp8, scale_is_amax_over_448_and_codes_are_exact) {
  std::vector<float> x = {0.5f, -3.0f, 1.25f, std::numeric_limits<float>::quiet_NaN(), 2.0f};
  EXPECT_EQ(e4m3_scale_for(x), 3.0f / 448.0f);  // finite values only
  EXPECT_EQ(e4m3_scale_for(std::vector<float>(4, 0.0f)), 1.0f);
  EXPECT_EQ(e4m3_scale_for(std::vector<float>{std::numeric_limits<float>::denorm_min()}),
            std::numeric_limits<float>::denorm_min());  // amax/448 underflows: kept positive
  const float s = e4m3_scale_for(x);
  const auto codes = e4m3_encode(x, s);
  ASSERT_EQ(codes.size(), x.size());
  EXPECT_EQ(codes[1], 0xFE);  // -amax -> -448
  EXPECT_EQ(codes[3], 0x7F);  // NaN stays NaN
  for (std::size_t i = 0; i < x.size(); ++i)
    if (i != 3) EXPECT_EQ(codes[i], e4m3_from_float(x[i] / s)) << i;
}
