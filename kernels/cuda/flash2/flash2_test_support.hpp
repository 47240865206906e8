// Checks shared by the flash2-family GPU tests (tests/gpu/test_flash2.cpp,
// test_sparse.cpp, test_gqa_packed.cpp, test_splitkv.cpp): run a row (or a
// runner with forced settings) against the fp64 reference, bound its error by
// twice cublas_unfused's error on the same problem, check the log-sum-exp, and
// check that rows with no visible key come out as O = 0, lse = -inf.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <string>

#include "harness/mask.hpp"
#include "harness/tensors.hpp"
#include "kernels/cuda/flash2/flash2_api.hpp"
#include "tests/gpu/gpu_test_util.hpp"

namespace attnbench::testing {

inline problem f2_problem(std::int64_t B, std::int64_t H, std::int64_t Hkv, std::int64_t Nq,
                          std::int64_t Nkv, std::int64_t d, dtype t, const char* mask,
                          std::int64_t Br = 128, std::int64_t Bc = 64) {
  problem p;
  p.B = B;
  p.H = H;
  p.Hkv = Hkv;
  p.Nq = Nq;
  p.Nkv = Nkv;
  p.d = d;
  p.type = t;
  p.mask = parse_mask(mask);
  p.Br = Br;
  p.Bc = Bc;
  validate(p);
  return p;
}

// Fixed bounds when cublas_unfused is absent or does not support the problem:
// about 4x the rms relative error of rounding O alone (bf16 2^-9, fp16 2^-12
// per element) plus P rounded to the input type before P V.
inline double fixed_bound(dtype t) { return t == dtype::bf16 ? 1.6e-2 : 2.0e-3; }

// Error bound for p: 2x cublas_unfused's rel-L2 error, or the fixed bound
// (the reason goes to the test log).
inline double error_bound(const problem& p, std::int64_t max_rows) {
  const variant* base = find_variant("cublas_unfused", backend_kind::cuda);
  if (!base) {
    std::cout << "[flash2] cublas_unfused row absent: fixed bound " << fixed_bound(p.type) << "\n";
    return fixed_bound(p.type);
  }
  const support s = base->supports(p);
  if (!s.ok) {
    std::cout << "[flash2] cublas_unfused does not run " << base->benchmark_name(p) << " (" << s.reason
              << "): fixed bound " << fixed_bound(p.type) << "\n";
    return fixed_bound(p.type);
  }
  const checked_run b = run_and_check(*base, p, max_rows);
  // The baseline can be near exact on tiny problems; never demand more than
  // the output rounding of the dtype allows (a quarter of the fixed bound).
  return std::max(low_precision_bound(b.err.rel_l2), fixed_bound(p.type) / 4);
}

// Same steps as run_and_check, for a runner made outside the registry.
inline checked_run run_runner_and_check(runner& r, const problem& p, std::int64_t max_rows,
                                        std::uint64_t seed = 1234) {
  const host_inputs in = make_inputs(p, seed);
  r.set_inputs(in);
  r.poison_outputs();
  r.run();
  ATTN_CUDA_CHECK(cudaStreamSynchronize(cuda::stream()));
  checked_run c;
  c.out = r.get_outputs();
  const auto rows = sample_rows(p, max_rows);
  const reference_rows ref = reference_softmax(in, rows);
  c.err = compare_rows(p, c.out.o, c.out.lse, rows, ref.o, ref.lse);
  return c;
}

// lse is fp32 from fp32 scores: only exp2/log rounding and summation order.
constexpr double kLseBound = 2e-3;

// Rows with no visible key: every element of O is exactly 0 and lse is -inf.
inline void expect_masked_rows_clean(const problem& p, const host_outputs& out) {
  ASSERT_EQ(out.lse.size(), static_cast<std::size_t>(p.rows()));
  std::int64_t checked = 0;
  for (std::int64_t bh = 0; bh < p.B * p.H; ++bh)
    for (std::int64_t i = 0; i < p.Nq; ++i) {
      if (visible_keys(p, i) != 0) continue;
      const std::int64_t row = bh * p.Nq + i;
      ++checked;
      EXPECT_TRUE(std::isinf(out.lse[row]) && out.lse[row] < 0) << "row " << row << " lse " << out.lse[row];
      for (std::int64_t c = 0; c < p.d; ++c)
        ASSERT_EQ(out.o[row * p.d + c], 0.0f) << "row " << row << " col " << c;
    }
  (void)checked;
}

inline std::int64_t fully_masked_rows(const problem& p) {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < p.Nq; ++i) n += visible_keys(p, i) == 0;
  return n;
}

// Runs row `name` on p and checks O (bound), lse and masked rows.
inline void expect_row_accurate(const char* name, const problem& p, std::int64_t max_rows = 512) {
  const variant* v = find_variant(name, backend_kind::cuda);
  ASSERT_NE(v, nullptr) << name << " row missing";
  const support s = v->supports(p);
  ASSERT_TRUE(s.ok) << v->benchmark_name(p) << ": " << s.reason;
  const double bound = error_bound(p, max_rows);
  const checked_run c = run_and_check(*v, p, max_rows);
  EXPECT_EQ(c.err.nonfinite, 0) << v->benchmark_name(p) << " first bad row " << c.err.first_bad_row;
  EXPECT_LE(c.err.rel_l2, bound) << v->benchmark_name(p) << " first bad row " << c.err.first_bad_row;
  EXPECT_LE(c.err.lse_max_abs, kLseBound) << v->benchmark_name(p);
  expect_masked_rows_clean(p, c.out);
}

}  // namespace attnbench::testing
