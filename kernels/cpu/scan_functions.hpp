// The scans' elementwise functions (docs/alternatives.md), scalar and branch-free so that the
// kernels' channel loops vectorise (std::log1p and std::exp do not): softplus and silu on
// exp_approx. tests/cpu/test_scan_rows.cpp holds them to double.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cpu/exp_approx.hpp"

namespace attnbench::cpu {

// softplus(v) = log(1 + e^v) = max(v, 0) + log1p(a), a = e^-|v| in (0, 1]. log1p(a) =
// 2 atanh(s), s = a / (2 + a) in (0, 1/3]: the odd series to s^17 (truncation < s^18 / 19 <
// 1.5e-10 relative), so no log and no branch. (A Goldberg log1p on a Cephes logf, tried first,
// kept the loop scalar: GCC would not if-convert it.) One exp.
inline float softplus_approx(float v) {
  const float a = exp_approx(-std::fabs(v));
  const float s = a / (2.0f + a), s2 = s * s;
  float series = 1.0f / 17.0f;
  series = series * s2 + 1.0f / 15.0f;
  series = series * s2 + 1.0f / 13.0f;
  series = series * s2 + 1.0f / 11.0f;
  series = series * s2 + 1.0f / 9.0f;
  series = series * s2 + 1.0f / 7.0f;
  series = series * s2 + 1.0f / 5.0f;
  series = series * s2 + 1.0f / 3.0f;
  series = series * s2 + 1.0f;
  return (v > 0.0f ? v : 0.0f) + 2.0f * s * series;
}

// silu(z) = z / (1 + e^-z). One exp.
inline float silu_approx(float z) { return z / (1.0f + exp_approx(-z)); }

}  // namespace attnbench::cpu
