// Checks shared by the flash2-family GPU tests (tests/gpu/test_flash2.cpp,
// test_sparse.cpp, test_gqa_packed.cpp, test_splitkv.cpp): run a row (or a
// runner with forced settings) against the fp64 reference, bound its error by
// min(twice cublas_unfused's error, the dtype's fixed bound) on the same problem, check the log-sum-exp, and
// check that rows with no visible key come out as O = 0, lse = -inf; every
// row is compared when the fp64 reference is affordable (checked_rows), and
// the whole O / lse is scanned for non-finite values either way.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <utility>

#include "core/mask.hpp"
#include "harness/tensors.hpp"
#include "kernels/cuda/flash2/flash2_plan.hpp"
#include "tests/gpu/gpu_test_util.hpp"

namespace attnbench::testing {

inline problem f2_problem(std::int64_t B, std::int64_t H, std::int64_t Hkv, std::int64_t Nq, std::int64_t Nkv,
                          std::int64_t d, dtype t, const char* mask, std::int64_t Br = 128, std::int64_t Bc = 64) {
  return make_problem(B, H, Hkv, Nq, Nkv, d, t, mask, Br, Bc);
}

// fixed_bound(dtype) (tests/gpu/tolerance.hpp): the bound when cublas_unfused
// is absent or does not support the problem, and the cap of every bound
// derived from it.

// Rows compared with the fp64 reference: every row when the reference costs
// at most ~5e8 multiply-adds (p.rows() * Nkv * d), else max_rows sampled ones.
inline std::int64_t checked_rows(const problem& p, std::int64_t max_rows) {
  const double work = static_cast<double>(p.rows()) * static_cast<double>(p.Nkv) * static_cast<double>(p.d);
  return work <= 5e8 ? p.rows() : max_rows;
}

// One run of a flash2-family kernel checked against fp64: the rel-L2 report
// over the checked rows, the worst single row, and a scan of the WHOLE output
// (sampled or not): O finite everywhere, lse finite where a row has a visible
// key and exactly -inf where it has none.
struct f2_checked_run {
  error_report err;
  host_outputs out;
  std::int64_t rows_checked = 0;
  double worst_row_rel = 0;  // max over checked rows of ||O_r - ref_r|| / ||ref_r|| (absolute if ref_r = 0)
  std::int64_t worst_row = -1;
  std::int64_t o_nonfinite = 0;  // non-finite elements anywhere in O
  std::int64_t lse_bad = 0;      // rows whose lse is NaN/inf though visible, or not -inf though empty
  std::int64_t first_lse_bad = -1;
};

inline f2_checked_run check_outputs(const problem& p, const host_inputs& in, host_outputs out, std::int64_t max_rows) {
  f2_checked_run c;
  const auto rows = sample_rows(p, checked_rows(p, max_rows));
  const reference_rows ref = reference_softmax(in, rows);
  c.err = compare_rows(p, out.o, out.lse, rows, ref.o, ref.lse);
  c.rows_checked = static_cast<std::int64_t>(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    double num = 0, den = 0;
    for (std::int64_t e = 0; e < p.d; ++e) {
      const double got = out.o[rows[r] * p.d + e], want = ref.o[r * p.d + e];
      num += (got - want) * (got - want);
      den += want * want;
    }
    const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    if (!(rel <= c.worst_row_rel)) {  // NaN wins
      c.worst_row_rel = rel;
      c.worst_row = rows[r];
      if (std::isnan(rel)) break;
    }
  }
  for (const float x : out.o) c.o_nonfinite += !std::isfinite(x);
  if (out.lse.size() != static_cast<std::size_t>(p.rows())) {
    c.lse_bad = p.rows();
  } else {
    for (std::int64_t row = 0; row < p.rows(); ++row) {
      const float l = out.lse[row];
      const bool empty = visible_keys(p, row % p.Nq) == 0;
      const bool ok = empty ? (std::isinf(l) && l < 0) : std::isfinite(l);
      if (!ok && c.lse_bad++ == 0) c.first_lse_bad = row;
    }
  }
  c.out = std::move(out);
  return c;
}

// Runs a runner made outside the registry (or by it) and checks it.
inline f2_checked_run run_runner_and_check(runner& r, const problem& p, std::int64_t max_rows,
                                           std::uint64_t seed = 1234) {
  const host_inputs in = make_inputs(p, seed);
  r.set_inputs(in);
  r.poison_outputs();
  r.run();
  sync_device();
  return check_outputs(p, in, r.get_outputs(), max_rows);
}

// Error bound for p: 2x cublas_unfused's rel-L2 error, or the fixed bound
// (the reason goes to the test log).
inline double error_bound(const problem& p, std::int64_t max_rows) {
  const double fixed = fixed_bound(p.type);
  const variant* base = find_variant("cublas_unfused", backend_kind::cuda);
  if (!base) {
    std::cout << "[flash2] cublas_unfused row absent: fixed bound " << fixed << "\n";
    return fixed;
  }
  const support s = base->supports(p);
  if (!s.ok) {
    std::cout << "[flash2] cublas_unfused does not run " << base->benchmark_name(p) << " (" << s.reason
              << "): fixed bound " << fixed << "\n";
    return fixed;
  }
  const checked_run b = run_and_check(*base, p, checked_rows(p, max_rows));
  // A baseline that gives non-finite values or an error beyond the fixed
  // bound is itself broken: the test fails (low_precision_bound) rather than
  // falling back to a bound the baseline cannot vouch for.
  EXPECT_EQ(b.err.nonfinite, 0) << "cublas_unfused gave non-finite values on " << base->benchmark_name(p);
  // The baseline can be near exact on tiny problems; never demand more than
  // the output rounding of the dtype allows (a quarter of the fixed bound).
  return std::max(low_precision_bound(b.err.rel_l2, p.type), fixed / 4);
}

// lse is fp32 from fp32 scores: only exp2/log rounding and summation order.
constexpr double kLseBound = 2e-3;
// e4m3: the scores come from the fp8 tensor cores, reported to accumulate
// with fewer mantissa bits than fp32 (DeepSeek-V3, arXiv 2412.19437
// 3.3.2: about 14); |s| reaches ~5 on these inputs, so 2^-14 x 5 x sqrt(d / 32)
// (one rounding per k32 step, d <= 256) ~ 1e-3: 5x margin. The emulator's fp32
// accumulation stays near 1e-6.
inline double lse_bound(dtype t) { return t == dtype::e4m3 ? 1e-2 : kLseBound; }

// Rows with no visible key: every element of O is exactly 0 and lse is -inf.
inline void expect_masked_rows_clean(const problem& p, const host_outputs& out) {
  ASSERT_EQ(out.lse.size(), static_cast<std::size_t>(p.rows()));
  for (std::int64_t bh = 0; bh < p.B * p.H; ++bh)
    for (std::int64_t i = 0; i < p.Nq; ++i) {
      if (visible_keys(p, i) != 0) continue;
      const std::int64_t row = bh * p.Nq + i;
      EXPECT_TRUE(std::isinf(out.lse[row]) && out.lse[row] < 0) << "row " << row << " lse " << out.lse[row];
      for (std::int64_t c = 0; c < p.d; ++c) ASSERT_EQ(out.o[row * p.d + c], 0.0f) << "row " << row << " col " << c;
    }
}

inline std::int64_t fully_masked_rows(const problem& p) {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < p.Nq; ++i) n += visible_keys(p, i) == 0;
  return n;
}

// Every check of one run against `bound`; `what` names it in failures.
inline void expect_accurate(const f2_checked_run& c, const problem& p, double bound, const std::string& what) {
  EXPECT_EQ(c.err.nonfinite, 0) << what << " first bad row " << c.err.first_bad_row;
  EXPECT_EQ(c.o_nonfinite, 0) << what << ": non-finite O outside/inside the checked rows";
  EXPECT_EQ(c.lse_bad, 0) << what << " first bad lse row " << c.first_lse_bad;
  EXPECT_LE(c.err.rel_l2, bound) << what << " first bad row " << c.err.first_bad_row << " (" << c.rows_checked
                                 << " rows checked)";
  EXPECT_LE(c.worst_row_rel, 4 * bound) << what << " worst row " << c.worst_row;
  EXPECT_LE(c.err.lse_max_abs, lse_bound(p.type)) << what;
  expect_masked_rows_clean(p, c.out);
}

// Runs row `name` on p and checks O (bound, per row, whole tensor), lse and
// masked rows. max_rows applies only when the reference over every row would
// cost more than checked_rows allows.
inline void expect_row_accurate(const char* name, const problem& p, std::int64_t max_rows = 512) {
  const variant* v = find_variant(name, backend_kind::cuda);
  ASSERT_NE(v, nullptr) << name << " row missing";
  const support s = v->supports(p);
  ASSERT_TRUE(s.ok) << v->benchmark_name(p) << ": " << s.reason;
  const double bound = error_bound(p, max_rows);
  auto r = v->make(p);
  expect_accurate(run_runner_and_check(*r, p, max_rows), p, bound, v->benchmark_name(p));
}

}  // namespace attnbench::testing
