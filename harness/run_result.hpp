// The typed result of one configuration: what validation and timing measured,
// the model figures (evaluated once per configuration) and the figures derived
// from both, which the JSON entry and the console line both print.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/variant.hpp"

namespace attnbench {

// A query row as (batch, head, row): flat row (b * H + h) * Nq + i.
struct row_position {
  std::int64_t b = -1, h = -1, i = -1;
};

// Accuracy of O (and lse) against the fp64 reference, checked before timing.
struct validation_result {
  bool checked = false;
  double rel_err = 0;  // NaN when O held NaN/inf (written as null)
  // Against the reference on the unrounded fp32 inputs (rel_err for fp32); NaN as rel_err.
  double e2e_rel_err = std::numeric_limits<double>::quiet_NaN();
  std::optional<input_scales> scales;  // e4m3: the per-tensor scales of the inputs
  double max_abs_err = 0;
  double lse_err = 0;
  std::int64_t checked_rows = 0;  // rows compared with the fp64 reference (the sample)
  double tolerance = 0;
  bool err_ok = false;  // no bad element, rel_err <= tolerance and worst_row_err <= row_tolerance
  // The check of every output (validation.hpp): every row scanned; rows_checked
  // rows with a measured error (every row against the backend's fp32 reference, or the
  // fp64 sample alone when that reference did not fit); the worst of them.
  std::int64_t rows_total = 0;  // B * H * Nq
  std::int64_t rows_checked = 0;
  std::int64_t nonfinite_outputs = 0;                               // bad elements of O and lse over every row
  std::int64_t nonfinite_rows = 0;                                  // rows holding one
  std::int64_t first_bad_row = -1;                                  // flat row of the first, -1 when none
  double worst_row_err = std::numeric_limits<double>::quiet_NaN();  // max row rel-L2 error
  std::int64_t worst_row = -1;                                      // its flat row, -1 when none
  row_position worst_at;                                            // the same row as (b, h, i)
  double row_tolerance = 0;                                         // what worst_row_err is held to
  std::int64_t counted_bytes = -1;                                  // runner.counted_bytes() of the validation run
  // pass bwd / fwd_bwd (docs/backward.md): each gradient's relative-L2 error against the fp64
  // reference over the sampled rows (dQ: query rows; dK, dV: key rows), NaN when one held a
  // non-finite value; grad_err the worst of the three. Folded into err_ok.
  bool grads_checked = false;
  double dq_err = std::numeric_limits<double>::quiet_NaN();
  double dk_err = std::numeric_limits<double>::quiet_NaN();
  double dv_err = std::numeric_limits<double>::quiet_NaN();
  double grad_err = std::numeric_limits<double>::quiet_NaN();
  double grad_tolerance = 0;
  std::int64_t grad_nonfinite = 0;     // bad elements over every element of dQ, dK and dV
  std::int64_t grad_checked_rows = 0;  // query rows + key rows compared with the fp64 reference
  // An approximation of softmax attention only: rel-L2 distance of the sampled rows to exact
  // fp64 softmax attention (information, never held to a tolerance); NaN otherwise.
  double approx_err_vs_exact = std::numeric_limits<double>::quiet_NaN();
};

struct timing_result {
  std::vector<double> rep_ms;      // real (or manual) time per iteration, one per repetition
  std::vector<double> rep_cpu_ms;  // cpu time per iteration
  std::int64_t iterations = 0;     // per repetition
  int batch = 1;                   // launches per timed sample (GPU)
};

struct measurement {
  std::string status = "ok";  // ok | skipped | failed
  std::string message;        // reason (skipped) or error text (failed)
  bool sticky = false;        // failed with a sticky backend error: the process must end
  validation_result val;
  timing_result time;
  std::vector<phase_time> phases;  // runner::phase_times() after timing: every run's phase seconds summed
};

struct time_stats {
  double median = 0, min = 0, max = 0, cv = 0;
};
time_stats stats_of(std::vector<double> v);  // median as Google Benchmark computes it

// row.model(p); nullopt when the row has none, does not run p.pass or it throws.
std::optional<model_figures> model_of(const variant& row, const problem& p);

// Non-finite figures are written as null.
struct entry_figures {
  time_stats time, cpu;         // over the repetitions
  bool timed = false;           // ok with a positive median
  double tflops = 0, gbps = 0;  // NaN unless timed with the model figure
  double intensity = 0;         // flops / bytes, NaN without both
};
entry_figures figures_of(const measurement& m, const std::optional<model_figures>& model);

}  // namespace attnbench
