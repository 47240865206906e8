// The error metric every check uses (relative L2 over the checked rows, the worst row, the
// non-finite count that never passes) and the tolerances a sweep holds each dtype to, with
// the measurements that set them.
#pragma once

#include <cstdint>
#include <span>

#include "core/problem.hpp"

namespace attnbench {

struct error_report {
  double rel_l2 = 0;                // ||O - ref||_2 / ||ref||_2 over the checked rows (abs L2 if ref is 0)
  double max_abs = 0;               // max |O - ref|
  double lse_max_abs = 0;           // max |lse - ref_lse| over finite entries (0 when not checked)
  std::int64_t nonfinite = 0;       // NaN/inf in O (or lse where ref is finite): never passes
  std::int64_t first_bad_row = -1;  // first row holding the max error or a non-finite value
  // The worst row: max over the checked rows without a non-finite value of the row's
  // ||O_r - ref_r||_2 / ||ref_r||_2 (||O_r - ref_r|| when ref_r is 0), and its flat row.
  double worst_row_err = 0;
  std::int64_t worst_row = -1;
  bool ok(double tol) const { return nonfinite == 0 && rel_l2 <= tol; }
};

// Compares rows of `o` (full [B,H,Nq,d] output) against reference rows.
// ref_o holds rows.size() * d values; ref_lse rows.size() values or empty.
error_report compare_rows(const problem& p, std::span<const float> o, std::span<const float> lse,
                          std::span<const std::int64_t> rows, std::span<const double> ref_o,
                          std::span<const double> ref_lse);

// What a sweep holds each gradient's relative-L2 error to (bwd, fwd_bwd), derived in
// error_metrics.cpp.
double grad_tolerance(dtype t);
// Relative-L2 tolerance used by sweeps to flag a result (tests use their own);
// e4m3: 2^-4, derived in error_metrics.cpp.
double sweep_tolerance(dtype t);
// What a sweep holds the worst row's relative error to, derived in error_metrics.cpp.
double row_tolerance(dtype t);

}  // namespace attnbench
