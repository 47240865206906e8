// The fp16/bf16 error bound of the GPU tests (and of their emulator runs,
// tests/emu): twice the cuBLAS unfused baseline's rel-L2 error on the same
// problem, capped by a fixed bound per dtype, and the baseline itself must
// lie within that fixed bound -- a wrong-but-finite baseline would otherwise
// widen every bound derived from it until a wrong kernel passes. Plain C++ (no CUDA) so the rule has a CPU unit test
// (tests/emu/tolerance_test.cpp).
#pragma once

#include <algorithm>
#include <cmath>

#include "core/problem.hpp"

namespace attnbench::testing {

// About 4x the rms relative error of rounding O alone (bf16 2^-9, fp16 2^-12
// per element) plus P rounded to the input type before P V. e4m3 (against
// the reference on the quantized inputs): P is rounded to e4m3 before P V,
// relative error <= u = 2^-4 per element (rms u / sqrt(3) ~ 0.036 for
// uniform rounding errors), O to bf16: the bound is u itself.
inline double fixed_bound(dtype t) {
  switch (t) {
    case dtype::bf16: return 1.6e-2;
    case dtype::e4m3: return 0.0625;
    default: return 2.0e-3;
  }
}

// e4m3 end to end, against the reference on the unquantized fp32 inputs: the
// quantization of Q, K and V adds one rounding each (<= u, rms ~u / sqrt(3))
// to the kernel's own; 2u bounds the sum.
inline constexpr double fp8_e2e_bound = 0.125;

struct low_precision_tolerance {
  double bound;              // min(2 x baseline + 1e-6, fixed_bound(t))
  bool baseline_within_cap;  // false: the baseline itself is suspect, the test must fail
};

inline low_precision_tolerance low_precision_tolerance_for(dtype t, double baseline_rel_err) {
  const double cap = fixed_bound(t);
  if (!std::isfinite(baseline_rel_err) || baseline_rel_err < 0) return {cap, false};
  return {std::min(2.0 * baseline_rel_err + 1e-6, cap), baseline_rel_err <= cap};
}

}  // namespace attnbench::testing
