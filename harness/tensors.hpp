// Host tensors: deterministic random inputs, rounding to a dtype (e4m3:
// per-tensor quantisation with recorded scales), row sampling for validation,
// and the error metric every check uses.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/variant.hpp"

namespace attnbench {

// Rounds x to the nearest value representable in t (round-to-nearest-even);
// identity for fp32; e4m3: e4m3_round(x), unscaled and saturating to +-448.
float round_to(dtype t, float x);

// Q, K, V ~ N(0, 1) in fp32 from a seed, not rounded (the "originals"; same
// seed, same values for every dtype); scales 1.
host_inputs make_original_inputs(const problem& p, std::uint64_t seed = 1234);
// Rounds the originals to in.p.type in place: fp16/bf16 value by value
// (round_to); e4m3 per tensor (quantize_e4m3), recording in.scales.
void round_inputs(host_inputs& in);
// make_original_inputs, then round_inputs: what a kernel is given.
host_inputs make_inputs(const problem& p, std::uint64_t seed = 1234);

// Per-tensor e4m3 quantisation in place: s = e4m3_scale_for(x) (amax / 448),
// x = e4m3_round(x / s) * s, so that e4m3_from_float(x / s) recovers each
// code exactly; returns s.
float quantize_e4m3(std::span<float> x);
// Values code x scale of raw e4m3 codes; input_error naming `what` and the
// element at the first NaN code (0x7F, 0xFF): codes carry no NaN input.
std::vector<float> dequantize_e4m3(std::span<const std::uint8_t> codes, float scale, std::string_view what);

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

// Relative-L2 tolerance used by sweeps to flag a result (tests use their own);
// e4m3: 2^-4, derived in tensors.cpp.
double sweep_tolerance(dtype t);

}  // namespace attnbench
