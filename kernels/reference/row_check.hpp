// The full check of one run's outputs: every element of O and of the
// log-sum-exp scanned for values that cannot be right, and every row's error
// against an all-rows reference when one is given. One definition of a row's
// verdict (row_verdict_of, host and device), used by the vectorised host scan
// (check_rows_host) and by the CUDA backend's kernel (kernels/cuda/reference/
// row_check.cu), whose per-row verdicts reduce_verdicts folds on the host.
//
// Expected values: every O element finite (a row without a visible key is 0);
// lse finite, and exactly -inf in a row without a visible key. A bad element is
// a non-finite O element, a non-finite lse of a row with keys, or an lse other
// than -inf in a row without keys; any bad element fails the entry.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "core/problem.hpp"

namespace attnbench {

// What the check found in one query row.
struct row_verdict {
  std::int32_t bad = 0;  // bad elements of the row (O and lse)
  float err = 0;         // ||o - ref||_2 / ||ref||_2 over the finite elements (||o - ref|| when ref is 0);
                         // 0 without a reference
  float lse_diff = 0;    // |lse - ref_lse| where both are finite; 0 otherwise
};

// Non-finite by the bit pattern (exponent all ones): vectorises, and stays right
// under flags that let the compiler assume finite values.
ATTN_HD inline std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
ATTN_HD inline bool nonfinite_float(float x) { return (float_bits(x) & 0x7f800000u) == 0x7f800000u; }
ATTN_HD inline bool is_minus_inf(float x) { return float_bits(x) == 0xff800000u; }

// The vectorised element loops of the host (OpenMP simd: a float reduction is
// reordered only where the pragma allows it); plain loops on the device.
#if defined(_OPENMP) && !defined(__CUDA_ARCH__)
#define ATTN_ROW_SIMD(...) _Pragma(ATTN_ROW_SIMD_STR(omp simd reduction(+ : __VA_ARGS__)))
#define ATTN_ROW_SIMD_STR(x) #x
#else
#define ATTN_ROW_SIMD(...)
#endif

// One row: o_at(x) gives element x of the row as float (d elements); lse / ref_lse
// only when has_lse / has_ref_lse; ref (d floats) may be null (scan only); empty:
// the row has no visible key.
template <class OAt>
ATTN_HD row_verdict row_verdict_of(OAt o_at, std::int64_t d, const float* ref, bool has_lse, float lse,
                                   bool has_ref_lse, float ref_lse, bool empty) {
  row_verdict v;
  std::int32_t bad = 0;
  if (ref) {
    float num = 0.f, den = 0.f;
    ATTN_ROW_SIMD(num, den, bad)
    for (std::int64_t x = 0; x < d; ++x) {
      const float got = o_at(x);
      const bool fin = !nonfinite_float(got);
      bad += fin ? 0 : 1;
      const float diff = fin ? got - ref[x] : 0.f;
      num += diff * diff;
      den += ref[x] * ref[x];
    }
    v.err = den > 0.f ? sqrtf(num / den) : sqrtf(num);
    if (!(v.err == v.err)) v.err = INFINITY;  // NaN never passes
  } else {
    ATTN_ROW_SIMD(bad)
    for (std::int64_t x = 0; x < d; ++x) bad += nonfinite_float(o_at(x)) ? 1 : 0;
  }
  if (has_lse) {
    if (empty ? !is_minus_inf(lse) : nonfinite_float(lse)) ++bad;
    if (has_ref_lse && !nonfinite_float(lse) && !nonfinite_float(ref_lse)) v.lse_diff = fabsf(lse - ref_lse);
  }
  v.bad = bad;
  return v;
}

// The check of a whole output: what the entry records.
struct full_check {
  std::int64_t rows_total = 0;      // B * H * Nq: every row is scanned
  std::int64_t rows_compared = 0;   // rows compared with the all-rows reference (0: scan only)
  std::int64_t bad = 0;             // bad elements (non-finite outputs), over every row
  std::int64_t bad_rows = 0;        // rows holding one
  std::int64_t first_bad_row = -1;  // flat row (b * H + h) * Nq + i, -1 when none
  double worst_err = 0;             // max row error over the compared rows without a bad element
  std::int64_t worst_row = -1;      // its row (the first of equal ones); -1 when none was compared
  double lse_max_abs = 0;           // max |lse - ref_lse| over the compared rows
};

// Folds per-row verdicts (row r of verdicts is flat row r).
full_check reduce_verdicts(std::span<const row_verdict> verdicts, bool compared);

// The rows of one batch element without a visible key, [H * Nq] (1: none visible; the
// same for every b), by core/mask.hpp's visible_keys.
std::vector<std::uint8_t> rows_without_keys(const problem& p);

// The full check on the host: o is [B*H*Nq, d] in float, lse [B*H*Nq] or empty (the row
// writes none), empty_rows from rows_without_keys; ref_o / ref_lse the all-rows reference
// or empty (scan only). Multithreaded over rows, the element loop vectorised.
full_check check_rows_host(const problem& p, std::span<const float> o, std::span<const float> lse,
                           std::span<const std::uint8_t> empty_rows, std::span<const float> ref_o,
                           std::span<const float> ref_lse);

}  // namespace attnbench
