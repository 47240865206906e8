// The CPU kernels' fast paths against plain loops: tile_gemm (NN
// and TN, the row-scale epilogue), the NT fast path of gemm_nt, the fused
// online-softmax pass across query rows and its block variant, each on the
// vectorised path and on the portable one (cblas + scalar loops), at sizes
// that are not multiples of the micro-kernel's 6 rows or 16 lanes; and the
// flash rows on the portable path. Every
// checker is first shown to reject a corrupted result (negative controls).
// The bf16 and e4m3 rounding of the rows' low-precision paths
// against core's e4m3 codec and an exhaustive bf16 rounding.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/fp8.hpp"
#include "core/mask.hpp"
#include "harness/tensors.hpp"
#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/round_dtype.hpp"
#include "kernels/cpu/tile_gemm.hpp"
#include "kernels/cpu/tile_softmax.hpp"
#include "kernels/reference/attention_reference.hpp"
#include "kernels/registry.hpp"

using namespace attnbench;
using namespace attnbench::cpu;

namespace {

constexpr float neg_inf = -std::numeric_limits<float>::infinity();

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = u(gen);
  return x;
}

// Restores the vectorised path however a test ends.
struct portable_path {
  explicit portable_path(bool on) { tile_gemm_force_blas(on); }
  ~portable_path() { tile_gemm_force_blas(false); }
};

// Largest |got - want| / (1 + |want|); NaN and inf count as infinitely wrong.
double max_error(const std::vector<float>& got, const std::vector<double>& want) {
  double e = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::abs(double(got[i]) - want[i]) / (1.0 + std::abs(want[i]));
    e = std::isfinite(d) ? std::max(e, d) : std::numeric_limits<double>::infinity();
  }
  return e;
}

struct gemm_case {
  std::int64_t m, n, k;
  bool tn;
  int update;  // 0: C = AB, 1: C += AB, 2: C = cs C + ps AB
};

// C as tile_gemm computes it, in double from the same inputs.
std::vector<double> gemm_expected(const gemm_case& g, float alpha, const std::vector<float>& a,
                                  const std::vector<float>& b, std::int64_t ldb, const std::vector<float>& c0,
                                  std::int64_t ldc, const std::vector<float>& cs, const std::vector<float>& ps) {
  std::vector<double> c(c0.begin(), c0.end());
  for (std::int64_t i = 0; i < g.m; ++i)
    for (std::int64_t j = 0; j < g.n; ++j) {
      double s = 0;
      for (std::int64_t x = 0; x < g.k; ++x) s += double(g.tn ? a[x * g.m + i] : a[i * g.k + x]) * b[x * ldb + j];
      double& out = c[i * ldc + j];
      if (g.update == 0)
        out = alpha * s;
      else if (g.update == 1)
        out += alpha * s;
      else
        out = cs[i] * out + double(ps[i]) * alpha * s;
    }
  return c;
}

double run_gemm_case(const gemm_case& g, std::uint64_t seed, bool corrupt) {
  const std::int64_t ldb = g.n + 3, ldc = g.n + 5;  // padded rows: strides are honoured
  const auto a = random_floats(g.m * g.k, seed);
  const auto b = random_floats(g.k * ldb, seed + 1);
  auto c = random_floats(g.m * ldc, seed + 2);
  const auto cs = random_floats(g.m, seed + 3), ps = random_floats(g.m, seed + 4);
  const float alpha = 0.37f;
  const auto want = gemm_expected(g, alpha, a, b, ldb, c, ldc, cs, ps);
  c_update u;
  u.accumulate = g.update != 0;
  if (g.update == 2) {
    u.c_row_scale = cs.data();
    u.ab_row_scale = ps.data();
  }
  const a_operand op = g.tn ? a_operand{a.data(), 1, g.m} : a_operand{a.data(), g.k, 1};
  tile_gemm(g.m, g.n, g.k, alpha, op, b.data(), ldb, c.data(), ldc, u);
  if (corrupt) c[(g.m - 1) * ldc + g.n - 1] += 0.01f;
  return max_error(c, want);
}

std::vector<gemm_case> gemm_cases() {
  std::vector<gemm_case> out;
  for (std::int64_t m : {1, 5, 6, 7, 13, 64, 70})
    for (std::int64_t n : {1, 8, 15, 16, 17, 40, 64, 65, 130})
      for (std::int64_t k : {1, 9, 64})
        for (bool tn : {false, true}) out.push_back({m, n, k, tn, int((m + n + k) % 3)});
  return out;
}

class both_paths : public ::testing::TestWithParam<bool> {};

TEST_P(both_paths, tile_gemm_matches_double_loops) {
  portable_path path(GetParam());
  int cases = 0;
  for (const gemm_case& g : gemm_cases()) {
    const double e = run_gemm_case(g, 100 + cases++, false);
    ASSERT_LT(e, 2e-6) << "m " << g.m << " n " << g.n << " k " << g.k << " tn " << g.tn << " update " << g.update;
  }
  EXPECT_GT(cases, 300);
}

// Negative control: the checker sees a 0.01 change in the last element (the
// masked tail lane of the last block) and a NaN.
TEST_P(both_paths, tile_gemm_checker_rejects_corruption) {
  portable_path path(GetParam());
  EXPECT_GT(run_gemm_case({13, 17, 9, true, 2}, 7, true), 1e-3);
  EXPECT_GT(run_gemm_case({64, 64, 64, false, 0}, 8, true), 1e-3);
  EXPECT_EQ(max_error({std::nanf("")}, {0.0}), std::numeric_limits<double>::infinity());
}

TEST_P(both_paths, gemm_nt_matches_double_loops) {
  portable_path path(GetParam());
  for (auto [m, n, k] : {std::tuple{64, 64, 64}, {37, 70, 24}, {1, 5, 8}, {70, 1, 130}}) {
    const std::int64_t ldb = k + 2;
    const auto a = random_floats(m * k, m), b = random_floats(n * ldb, n);
    for (float beta : {0.0f, 1.0f, 0.5f}) {
      auto c = random_floats(m * n, k);
      std::vector<double> want(c.begin(), c.end());
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double s = 0;
          for (int x = 0; x < k; ++x) s += double(a[i * k + x]) * b[j * ldb + x];
          want[i * n + j] = 1.5 * s + beta * want[i * n + j];
        }
      gemm_nt(m, n, k, 1.5f, a.data(), k, b.data(), ldb, beta, c.data(), n);
      EXPECT_LT(max_error(c, want), 2e-6) << m << "x" << n << "x" << k << " beta " << beta;
      c[0] += 0.01f * (1.0f + std::abs(c[0]));  // negative control
      EXPECT_GT(max_error(c, want), 1e-3);
    }
  }
}

// A transposed score tile with masked (-inf) entries, one column wholly
// masked, and running statistics that are fresh (-inf, 0) or finite.
struct softmax_case {
  std::int64_t rows, cols, ld;
  std::vector<float> st, m, l;
};

softmax_case make_softmax_case(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  softmax_case c{rows, cols, rows + 3, {}, {}, {}};
  c.st = random_floats(cols * c.ld, seed);
  for (float& x : c.st) x *= 8.0f;
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i)
      if ((i + 2 * j) % 5 == 0 || i == rows / 2) c.st[j * c.ld + i] = neg_inf;
  c.m = random_floats(rows, seed + 1);
  c.l = random_floats(rows, seed + 2);
  for (std::int64_t i = 0; i < rows; ++i) {
    c.l[i] = 1.0f + std::abs(c.l[i]);
    if (i % 3 == 0) {
      c.m[i] = neg_inf;
      c.l[i] = 0.0f;
    }
  }
  return c;
}

// Checks online_softmax_columns against double; returns the largest error.
// corrupt: 0 none, 1 a NaN score, 2 a running sum off by 1e-3.
double check_online(softmax_case c, int corrupt) {
  std::vector<double> want_st(c.st.begin(), c.st.end()), want_m(c.rows), want_l(c.rows), want_alpha(c.rows);
  for (std::int64_t i = 0; i < c.rows; ++i) {
    double mx = c.m[i];
    for (std::int64_t j = 0; j < c.cols; ++j) mx = std::max<double>(mx, c.st[j * c.ld + i]);
    const double mu = std::isinf(mx) ? 0.0 : mx;
    double sum = 0;
    for (std::int64_t j = 0; j < c.cols; ++j) {
      double& s = want_st[j * c.ld + i];
      s = std::exp(s - mu);
      sum += s;
    }
    want_alpha[i] = std::exp(double(c.m[i]) - mu);
    want_l[i] = c.l[i] * want_alpha[i] + sum;
    want_m[i] = mx;
  }
  std::vector<float> alpha(c.rows);
  online_softmax_columns(c.st.data(), c.cols, c.ld, c.rows, c.m.data(), c.l.data(), alpha.data());
  if (corrupt == 1) c.st[(c.cols - 1) * c.ld + c.rows - 1] = std::nanf("");
  if (corrupt == 2) c.l[c.rows - 1] += 1e-3f * (1.0f + std::abs(c.l[c.rows - 1]));
  double e = 0;
  for (std::int64_t i = 0; i < c.rows; ++i) {
    if (!(c.m[i] == float(want_m[i]))) return std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < c.cols; ++j) e = std::max(e, max_error({c.st[j * c.ld + i]}, {want_st[j * c.ld + i]}));
  }
  return std::max({e, max_error(c.l, want_l), max_error(alpha, want_alpha)});
}

TEST_P(both_paths, online_softmax_matches_double) {
  portable_path path(GetParam());
  for (std::int64_t rows : {1, 15, 16, 17, 37, 64, 256})
    for (std::int64_t cols : {1, 2, 5, 64})
      EXPECT_LT(check_online(make_softmax_case(rows, cols, rows * 100 + cols), 0), 1e-6)
          << rows << " rows, " << cols << " cols";
}

TEST_P(both_paths, online_softmax_checker_rejects_corruption) {
  portable_path path(GetParam());
  EXPECT_EQ(check_online(make_softmax_case(37, 5, 1), 1), std::numeric_limits<double>::infinity());
  EXPECT_GT(check_online(make_softmax_case(37, 5, 1), 2), 1e-4);
}

TEST_P(both_paths, block_softmax_matches_double) {
  portable_path path(GetParam());
  for (std::int64_t rows : {1, 17, 64})
    for (std::int64_t cols : {1, 7, 64}) {
      softmax_case c = make_softmax_case(rows, cols, rows + 7 * cols);
      std::vector<float> st0 = c.st;
      block_softmax_columns(c.st.data(), cols, c.ld, rows, c.m.data(), c.l.data());
      for (std::int64_t i = 0; i < rows; ++i) {
        double mx = -INFINITY, sum = 0;
        for (std::int64_t j = 0; j < cols; ++j) mx = std::max<double>(mx, st0[j * c.ld + i]);
        const double mu = std::isinf(mx) ? 0.0 : mx;
        for (std::int64_t j = 0; j < cols; ++j) {
          const double want = std::exp(st0[j * c.ld + i] - mu);
          sum += want;
          ASSERT_LT(max_error({c.st[j * c.ld + i]}, {want}), 1e-6) << i << "," << j;
        }
        ASSERT_EQ(c.m[i], float(mx)) << i;
        ASSERT_LT(max_error({c.l[i]}, {sum}), 1e-6) << i;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(tile_kernels, both_paths, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "portable" : "vectorised"; });

// The flash rows on the portable path (cblas + scalar softmax), against the
// fp64 reference; the vectorised path is covered by test_cpu_variants.
TEST(tile_kernels, flash_rows_on_the_portable_path_match_the_reference) {
  portable_path path(true);
  for (const char* name : {"flash2", "flash1", "sparse"})
    for (const char* mask : {"none", "causal", "local:9,2+global:3"}) {
      const variant& v = *find_variant(name, backend_kind::cpu);
      const problem p = make_problem(2, 4, 2, 77, 45, 40, dtype::fp32, mask, 32, 16);
      if (!v.supports(p).ok) continue;
      const host_inputs in = make_inputs(p, 3);
      auto r = v.make(p);
      r->set_inputs(in);
      r->poison_outputs();
      r->run();
      const host_outputs out = r->get_outputs();
      const auto rows = all_rows(p);
      const reference_rows ref = reference_softmax(in, rows);
      const error_report e = compare_rows(p, out.o, out.lse, rows, ref.o, ref.lse);
      EXPECT_TRUE(e.ok(1e-5)) << v.benchmark_name(p) << ": rel_l2 " << e.rel_l2;
    }
}

// Values that exercise e4m3 rounding: every finite code, the midpoint of each
// pair of neighbours (ties go to the even code) and a float either side of
// it, random magnitudes over 2^-12 .. 2^10 (subnormals, normals, saturation),
// both signs, and the specials.
std::vector<float> e4m3_probe_values() {
  std::vector<float> xs;
  for (int c = 0; c < 0x7E; ++c) {
    const float a = e4m3_to_float(static_cast<std::uint8_t>(c)), b = e4m3_to_float(static_cast<std::uint8_t>(c + 1));
    const float mid = 0.5f * (a + b);  // exact: a and b have 4 significant bits
    for (float x : {a, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      xs.push_back(x);
      xs.push_back(-x);
    }
  }
  std::mt19937_64 gen(16);
  std::uniform_real_distribution<float> m(1.0f, 2.0f);
  std::uniform_int_distribution<int> e(-12, 10);
  for (int i = 0; i < 200000; ++i) xs.push_back((i % 2 ? -1.0f : 1.0f) * std::ldexp(m(gen), e(gen)));
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f, -0.0f, 448.0f, 449.0f, 463.9f, 464.0f, 480.0f, 1e30f, inf, -inf, std::ldexp(1.0f, -10),
                  std::ldexp(3.0f, -10), std::ldexp(1.0f, -6) - std::ldexp(1.0f, -11)})
    xs.push_back(x);
  return xs;
}

TEST(tile_kernels, e4m3_round_fast_matches_the_core_codec) {
  const std::vector<float> xs = e4m3_probe_values();
  int moved = 0;
  for (float x : xs) {
    const float want = e4m3_round(x);
    ASSERT_EQ(std::bit_cast<std::uint32_t>(e4m3_round_fast(x)), std::bit_cast<std::uint32_t>(want)) << x;
    moved += want != x;
  }
  // Control: most probes are not e4m3 values, so equality is not met by leaving x alone.
  EXPECT_GT(moved, 150000);
  EXPECT_TRUE(std::isnan(e4m3_round_fast(std::numeric_limits<float>::quiet_NaN())));
  // The vectorised row operation of the fp8 P: e4m3(256 x).
  std::vector<float> p = random_floats(1000, 7);
  for (float& x : p) x = std::ldexp(std::fabs(x), -static_cast<int>(std::fabs(x) * 24));  // 2^-24 .. 1
  std::vector<float> r = p;
  offset_round_e4m3(r.data(), static_cast<std::int64_t>(r.size()));
  for (std::size_t i = 0; i < p.size(); ++i) ASSERT_EQ(r[i], e4m3_round(256.0f * p[i])) << p[i];
}

// The nearest bf16 of x, ties to even, by comparing the two candidates in double.
float bf16_nearest(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const float lo = std::bit_cast<float>(u & 0xFFFF0000u), hi = std::bit_cast<float>((u & 0xFFFF0000u) + 0x10000u);
  const double dl = std::fabs(double(x) - lo), dh = std::fabs(double(hi) - x);
  if (dl != dh) return dl < dh ? lo : hi;
  return (std::bit_cast<std::uint32_t>(lo) >> 16) & 1u ? hi : lo;
}

TEST(tile_kernels, bf16_round_is_round_to_nearest_even) {
  std::vector<float> xs = random_floats(100000, 9);
  for (std::uint32_t low : {0x8000u, 0x18000u, 0x7FFFu, 0x8001u})  // ties both ways, either side
    for (std::uint32_t hi : {0x3F800000u, 0xC0490000u, 0x00010000u}) xs.push_back(std::bit_cast<float>(hi + low));
  int moved = 0;
  for (float x : xs) {
    ASSERT_EQ(bf16_round(x), bf16_nearest(x)) << x;
    moved += bf16_round(x) != x;
  }
  EXPECT_GT(moved, 90000);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bf16_round(inf), inf);
  EXPECT_TRUE(std::isnan(bf16_round(std::numeric_limits<float>::quiet_NaN())));
  std::vector<float> r(xs.begin(), xs.begin() + 1000);
  round_bf16(r.data(), 1000);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(r[i], bf16_nearest(xs[i]));
}

}  // namespace
