// Host tensors: deterministic random inputs, rounding to a dtype, row
// sampling for validation, and the error metric every check uses.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/variant.hpp"

namespace attnbench {

// Rounds x to the nearest value representable in t (round-to-nearest-even);
// identity for fp32.
float round_to(dtype t, float x);

// Q, K, V ~ N(0, 1), rounded to p.type, from a seed (same seed, same values).
host_inputs make_inputs(const problem& p, std::uint64_t seed = 1234);

// Query rows to validate, as flat indices (b * H + h) * Nq + i: all rows when
// there are at most max_rows, else max_rows rows spread over every (b, h)
// that always include the first and last row of each sampled head and every
// row i < global (those see every key).
std::vector<std::int64_t> sample_rows(const problem& p, std::int64_t max_rows, std::uint64_t seed = 7);
std::vector<std::int64_t> all_rows(const problem& p);

struct error_report {
  double rel_l2 = 0;     // ||O - ref||_2 / ||ref||_2 over the checked rows (abs L2 if ref is 0)
  double max_abs = 0;    // max |O - ref|
  double lse_max_abs = 0;  // max |lse - ref_lse| over finite entries (0 when not checked)
  std::int64_t nonfinite = 0;  // NaN/inf in O (or lse where ref is finite): never passes
  std::int64_t first_bad_row = -1;  // first row holding the max error or a non-finite value
  bool ok(double tol) const { return nonfinite == 0 && rel_l2 <= tol; }
};

// Compares rows of `o` (full [B,H,Nq,d] output) against reference rows.
// ref_o holds rows.size() * d values; ref_lse rows.size() values or empty.
error_report compare_rows(const problem& p, std::span<const float> o, std::span<const float> lse,
                          std::span<const std::int64_t> rows, std::span<const double> ref_o,
                          std::span<const double> ref_lse);

// Relative-L2 tolerance used by sweeps to flag a result (tests use their own).
double sweep_tolerance(dtype t);

}  // namespace attnbench
