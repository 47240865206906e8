// Shapes, masks and tolerances shared by the GPU tests of the unfused,
// flash1, linear and reference rows (tests/gpu/test_{unfused,flash1,linear,
// reference_fp32}.cpp). Small shapes go against the fp64 CPU reference; the
// large ones against the on-device fp32 reference.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "kernels/registry.hpp"
#include "harness/tensors.hpp"
#include "kernels/cuda/reference/reference_device.cuh"
#include "tests/gpu/gpu_test_util.hpp"

namespace attnbench::testing {

struct shape {
  std::int64_t B, H, Hkv, Nq, Nkv, d;
};

// Ragged lengths, Nq < Nkv and Nq > Nkv, GQA ratios 1, 2, 8 and all heads on
// one KV head, decode (Nq = 1), d not a multiple of 32, d = 256.
inline const std::vector<shape>& small_shapes() {
  static const std::vector<shape> s = {
      {1, 2, 2, 37, 53, 64}, {2, 4, 2, 70, 45, 32},  {1, 8, 1, 64, 64, 128},  {1, 8, 8, 1, 100, 64},
      {1, 3, 3, 33, 33, 40}, {1, 2, 1, 19, 77, 256}, {1, 16, 2, 17, 130, 64},
  };
  return s;
}

inline const std::vector<std::string>& softmax_masks() {
  static const std::vector<std::string> m = {"none", "causal", "local:8,4", "causal+global:3", "local:5,0+global:4"};
  return m;
}

inline problem make_problem(const shape& s, dtype t, const std::string& mask, std::int64_t br = 64,
                            std::int64_t bc = 64) {
  return attnbench::make_problem(s.B, s.H, s.Hkv, s.Nq, s.Nkv, s.d, t, mask, br, bc);
}

inline std::string describe(const problem& p) { return benchmark_name("case", "cuda", p); }

// fp32: every variant computes in fp32 from fp32 inputs.
inline constexpr double fp32_tol = 1e-5;
inline constexpr double fp32_lse_tol = 1e-4;

// Error of the cuBLAS unfused baseline on p (fp64 CPU reference, all rows).
inline double baseline_error(const problem& p) {
  const variant* base = find_variant("cublas_unfused", backend_kind::cuda);
  EXPECT_NE(base, nullptr);
  if (!base) return 0;
  const checked_run c = run_and_check(*base, p);
  EXPECT_EQ(c.err.nonfinite, 0) << describe(p);
  return c.err.rel_l2;
}

// The test's bound for variant `v` on p: tight for fp32, else min(2x cuBLAS's,
// the dtype's fixed bound), cuBLAS's own error within the fixed bound.
inline double bound_for(const problem& p) {
  return p.type == dtype::fp32 ? fp32_tol : low_precision_bound(baseline_error(p), p.type);
}

// Runs v on p against the fp64 reference and checks O (and lse) within `tol`.
inline void expect_close(const variant& v, const problem& p, double tol) {
  SCOPED_TRACE(v.name + " " + describe(p));
  const checked_run c = run_and_check(v, p);
  EXPECT_EQ(c.err.nonfinite, 0) << "first bad row " << c.err.first_bad_row;
  EXPECT_LE(c.err.rel_l2, tol) << "max abs " << c.err.max_abs << " first bad row " << c.err.first_bad_row;
  if (v.writes_lse) {
    EXPECT_EQ(c.out.lse.size(), static_cast<std::size_t>(p.rows()));
    EXPECT_LE(c.err.lse_max_abs, p.type == dtype::fp32 ? fp32_lse_tol : 1e-2);
  }
}

// Large shapes: v against the on-device fp32 reference over every row.
inline error_report compare_with_device_reference(const variant& v, const problem& p, std::uint64_t seed = 99) {
  const host_inputs in = make_inputs(p, seed);
  const host_outputs ref = cuda::reference_fp32_on_device(v.math, in);
  auto r = v.make(p);
  r->set_inputs(in);
  r->poison_outputs();
  r->run();
  sync_device();
  const host_outputs out = r->get_outputs();
  const std::vector<std::int64_t> rows = all_rows(p);
  const std::vector<double> ref_o(ref.o.begin(), ref.o.end());
  std::vector<double> ref_lse;
  if (v.writes_lse) ref_lse.assign(ref.lse.begin(), ref.lse.end());
  return compare_rows(p, out.o, out.lse, rows, ref_o, ref_lse);
}

}  // namespace attnbench::testing
