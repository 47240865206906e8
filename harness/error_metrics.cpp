#include "harness/error_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnbench {

error_report compare_rows(const problem& p, std::span<const float> o, std::span<const float> lse,
                          std::span<const std::int64_t> rows, std::span<const double> ref_o,
                          std::span<const double> ref_lse) {
  error_report e;
  double num = 0, den = 0, worst = -1;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    double row_num = 0, row_den = 0;
    const std::int64_t bad_before = e.nonfinite;
    for (std::int64_t c = 0; c < p.d; ++c) {
      const double got = o[rows[r] * p.d + c], want = ref_o[r * p.d + c];
      if (!std::isfinite(got)) {
        if (e.nonfinite++ == 0 && e.first_bad_row < 0) e.first_bad_row = rows[r];
        continue;
      }
      const double diff = std::fabs(got - want);
      row_num += diff * diff;
      row_den += want * want;
      if (diff > worst) {
        worst = diff;
        if (e.nonfinite == 0) e.first_bad_row = rows[r];
      }
    }
    num += row_num;
    den += row_den;
    if (e.nonfinite == bad_before) {
      const double row_err = row_den > 0 ? std::sqrt(row_num / row_den) : std::sqrt(row_num);
      if (e.worst_row < 0 || row_err > e.worst_row_err) {
        e.worst_row_err = row_err;
        e.worst_row = rows[r];
      }
    }
    if (!ref_lse.empty() && !lse.empty()) {
      const double got = lse[rows[r]], want = ref_lse[r];
      if (std::isinf(want) && want < 0) {
        if (!(std::isinf(got) && got < 0)) ++e.nonfinite;  // must report an empty row as -inf
      } else if (!std::isfinite(got)) {
        ++e.nonfinite;
      } else {
        e.lse_max_abs = std::max(e.lse_max_abs, std::fabs(got - want));
      }
    }
  }
  e.max_abs = std::max(worst, 0.0);
  e.rel_l2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  if (e.nonfinite > 0) e.rel_l2 = std::numeric_limits<double>::quiet_NaN();
  return e;
}

double sweep_tolerance(dtype t) {
  switch (t) {
    case dtype::fp32: return 1e-4;
    case dtype::fp16: return 5e-3;
    case dtype::bf16: return 3e-2;
    // e4m3: the reference sees the same quantised Q, K, V as the kernel, so
    // what remains is the kernel's own rounding, dominated by P: an fp8 kernel
    // (FA3) rounds P = exp(S - m) in [0, 1] to e4m3 before P.V, a relative
    // error per element of at most u = 2^-4 (3 mantissa bits: the unit
    // roundoff 2^-(3+1); below 2^-6, subnormal, an absolute error of at most
    // 2^-10 on weights that small); S, l and O accumulate in fp32 and O is stored in
    // bf16 (2^-9), both far below. O - O' = sum_j p_j d_j v_j / l with
    // |d_j| <= u: for independent roundings (RMS of d_j at most u/sqrt(3))
    // and random V, rel-L2(O) ~ u/sqrt(3) = 0.036 at most. Tolerance: u
    // itself, 0.0625 on rel-L2. Simulated (N(0,1) inputs quantised per
    // tensor, Nkv 64..16k, d 64/128): P rounded to e4m3 gives 0.021..0.028
    // (a margin of 2.2x); P with 2 mantissa bits 0.043..0.052 would still
    // pass; 1 mantissa bit 0.08..0.10 and a lost V descale (x 1/s ~ 100) fail.
    // tests/cpu/test_validation_fp8.cpp holds both sides on the usual shapes.
    case dtype::e4m3: return 0.0625;
  }
  return 0;
}

double grad_tolerance(dtype t) {
  // The forward's rule applied to each gradient (docs/backward.md). fp32: O's bound; the
  // CPU rows measure 2.9e-7 to 4.1e-7 (naive and flash2, tests/cpu/test_backward.cpp's grid
  // and the quick train group), so 1e-4 leaves room for long rows and catches any wrong
  // term (a dropped D or a group reduced over the wrong heads is O(1)). fp16/bf16: the
  // same-precision unfused baseline, cublas_unfused's backward (P and dS rounded to the
  // dtype, fp32 dP), worst rel-L2 of dQ, dK, dV over tests/gpu/test_unfused_bwd.cpp's small
  // shapes x masks under the emulator: 4.2e-4 fp16, 3.5e-3 bf16 (fp32 5.6e-7), as large as
  // its forward's O error; so the forward's sweep bounds, 12x and 8.6x of it, the ratio the
  // forward's rule leaves. e4m3: no backward claims it (the CUDA backward refuses it).
  switch (t) {
    case dtype::fp32: return 1e-4;
    case dtype::fp16: return 5e-3;
    case dtype::bf16: return 3e-2;
    case dtype::e4m3: return 1.25e-1;
  }
  return 1e-4;
}

double row_tolerance(dtype t) {
  // The worst row: a small multiple (4x) of the worst row of the same-precision
  // unfused baselines, capped by the pooled tolerance. The worst row of a correct kernel is
  // larger than its pooled rel_err (2.6-17x in the CPU quick sweep): rows with many visible
  // keys have small O (an average of ~N(0,1) values) and so a larger relative rounding error,
  // and the pooled figure is weighted to rows with few keys and large O.
  switch (t) {
    // naive (cpu) 1.9e-6 over the quick sweep, 2.6e-6 at 131072 keys (flash1); the
    // on-device fp32 reference sums P V over the keys in order, ~eps sqrt(N) ~ 1.5e-5 at
    // 131072 keys, 4x of which is near the cap: the cap.
    case dtype::fp32: return 1e-4;
    // cublas_unfused (emulated, B1 H8 N256 d64, 2048 rows): 4.7e-4 fp16, 3.8e-3 bf16 (naive
    // 2.9e-4, 2.4e-3), x4 and rounded up: the GPU tests' fixed bounds (tests/gpu/tolerance.hpp).
    // Over 1M rows the chi-square tail of the row norms adds ~1.2x (d 64).
    case dtype::fp16: return 2e-3;
    case dtype::bf16: return 1.6e-2;
    // No unfused e4m3 row. Rounding P to e4m3 (u = 2^-4) gives rows with many keys a
    // relative error near u / sqrt(3) each: the worst row of the CPU fp8 simulation (flash2
    // e4m3, quick sweep, 8192 rows) is 0.042, 1.8x its pooled 0.024 and 1.5x below u; 2u
    // (tests/gpu/tolerance.hpp's fp8_e2e_bound) leaves 3x.
    case dtype::e4m3: return 0.125;
  }
  return 0;
}

}  // namespace attnbench
