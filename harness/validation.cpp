#include "harness/validation.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "harness/backend.hpp"
#include "kernels/reference/attention_reference.hpp"
#include "kernels/reference/backward_reference.hpp"
#include "kernels/reference/row_check.hpp"

namespace attnbench {

std::int64_t validation_rows(const problem& p) {
  // ~3e8 fp64 multiply-adds of the reference per configuration.
  const double per_row = 2.0 * double(p.Nkv) * double(p.d);
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(3e8 / per_row), 16, 256);
}

// A problem's fwd, bwd and fwd_bwd runs share its inputs and references (pass reset).
problem reference_cache::shape_of(problem p) {
  p.Br = p.Bc = 64;
  p.mask = {};
  p.pass = pass_kind::fwd;
  return p;
}

problem reference_cache::problem_of(problem p) {
  p.Br = p.Bc = 64;
  p.pass = pass_kind::fwd;
  return p;
}

std::vector<std::int64_t> validation_kv_rows(const problem& p) {
  // Each key row needs every query row of its group: ~3e8 fp64 multiply-adds as for rows.
  const double per_row = 3.0 * double(p.Nq) * double(p.group()) * double(p.d);
  const auto n = std::clamp<std::int64_t>(static_cast<std::int64_t>(3e8 / per_row), 16, 256);
  // ... and the statistics of every query row of its group, Nq Nkv d per query head: the key
  // rows come from as many KV heads as ~3e10 of those allow (~1.5 s on 16 cores; bwd at N 8k,
  // d 64, B 1, H 16 spent 14 s on all 16 heads), at least one. 16k, d 128: 1 head of 16.
  const std::int64_t heads = p.B * p.Hkv;
  const double per_head = double(p.group()) * double(p.Nq) * double(p.Nkv) * double(p.d);
  const auto kept = std::clamp<std::int64_t>(static_cast<std::int64_t>(3e10 / per_head), 1, heads);
  problem keys = p;  // the key rows as the query rows of a problem with `kept` heads of Nkv rows
  keys.B = 1;
  keys.H = kept;
  keys.Nq = p.Nkv;
  keys.mask = {};
  std::vector<std::int64_t> rows = sample_rows(keys, n);
  if (kept == heads) return rows;
  // Spread over the heads from the last one (far from the zero offset where a wrong stride hides).
  for (std::int64_t& r : rows) {
    const std::int64_t s = r / p.Nkv;
    r = (heads - 1 - (kept == 1 ? 0 : s * (heads - 1) / (kept - 1))) * p.Nkv + r % p.Nkv;
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

reference_cache::reference_cache() : reference_cache([](const problem& p) { return make_original_inputs(p); }) {}

reference_cache::reference_cache(originals_maker make_originals) : make_originals_(std::move(make_originals)) {}

void reference_cache::keep_only(const problem& p) {
  if (!(problem_ == problem_of(p))) {
    for (int m = 0; m < attention_math_count; ++m) {
      refs_[m].reset();
      all_rows_[m].reset();
      all_rows_tried_[m] = false;
    }
    empty_rows_.reset();
    grads_.reset();
  }
  if (inputs_ && !(shape_ == shape_of(p))) {
    inputs_.reset();
    originals_.reset();
  }
}

host_inputs& reference_cache::inputs(const problem& p) {
  keep_only(p);
  if (!inputs_) {
    const problem shape = shape_of(p);
    host_inputs orig = make_originals_(shape);
    orig.p = shape;
    // fp32 rounds nothing: the originals are the inputs, kept once.
    if (shape.type != dtype::fp32) originals_ = std::make_unique<host_inputs>(orig);
    round_inputs(orig);
    inputs_ = std::make_unique<host_inputs>(std::move(orig));
    shape_ = shape;
  }
  if (p.pass != pass_kind::fwd && inputs_->d_o.empty()) inputs_->d_o = make_grad_output(shape_);
  problem_ = problem_of(p);
  inputs_->p = p;  // mask and tiles of the current configuration; the data do not depend on them
  if (originals_) originals_->p = p;
  return *inputs_;
}

const host_inputs& reference_cache::originals(const problem& p) {
  host_inputs& in = inputs(p);
  return originals_ ? *originals_ : in;
}

const reference_cache::rows_and_ref& reference_cache::reference(const problem& p, attention_math m) {
  host_inputs& in = inputs(p);
  auto& slot = refs_[static_cast<int>(m)];
  if (!slot) {
    slot = std::make_unique<rows_and_ref>();
    slot->rows = sample_rows(p, validation_rows(p));
    reference_rows r = reference_for(m, in, slot->rows);
    slot->o = std::move(r.o);
    slot->lse = std::move(r.lse);
    // The end-to-end reference: same rows on the unrounded inputs (bf16, fp16,
    // e4m3), doubling the fp64 work of those dtypes (bounded as above).
    if (originals_) slot->e2e_o = reference_for(m, *originals_, slot->rows).o;
  }
  return *slot;
}

const reference_all_rows* reference_cache::all_rows(const problem& p, attention_math m, std::int64_t free_bytes) {
  const host_inputs& in = inputs(p);
  const int slot = static_cast<int>(m);
  if (!all_rows_tried_[slot]) {
    all_rows_tried_[slot] = true;
    const bool has_fp32_twin = m == attention_math::softmax || m == attention_math::linear;
    if (has_fp32_twin && 2 * reference_fp32_bytes(p) <= free_bytes)
      all_rows_[slot] = std::make_unique<reference_all_rows>(reference_fp32_all_rows(m, in));
  }
  return all_rows_[slot].get();
}

const reference_cache::grads_and_ref& reference_cache::gradients(const problem& p) {
  host_inputs& in = inputs(p);
  if (!grads_) {
    grads_ = std::make_unique<grads_and_ref>();
    grads_->q_rows = sample_rows(p, validation_rows(p));
    grads_->kv_rows = validation_kv_rows(p);
    reference_grads g = reference_softmax_backward(in, grads_->q_rows, grads_->kv_rows);
    grads_->dq = std::move(g.dq);
    grads_->dk = std::move(g.dk);
    grads_->dv = std::move(g.dv);
  }
  return *grads_;
}

const std::vector<std::uint8_t>& reference_cache::rows_without_keys(const problem& p) {
  inputs(p);  // keep_only(p) and the current problem
  if (!empty_rows_) empty_rows_ = std::make_unique<std::vector<std::uint8_t>>(attnbench::rows_without_keys(p));
  return *empty_rows_;
}

namespace {

struct row_index {
  std::int64_t b, h, i;
};
row_index split_row(const problem& p, std::int64_t r) { return {r / (p.H * p.Nq), (r / p.Nq) % p.H, r % p.Nq}; }

std::int64_t count_nonfinite(const std::vector<float>& x) {
  std::int64_t n = 0;
  for (float v : x) n += !std::isfinite(v);
  return n;
}

// pass bwd / fwd_bwd: every gradient element scanned, sampled rows against fp64.
void check_gradients(const problem& p, const host_outputs& out, reference_cache& cache, validation_result& v) {
  if (static_cast<std::int64_t>(out.dq.size()) != p.q_elems() ||
      static_cast<std::int64_t>(out.dk.size()) != p.kv_elems() ||
      static_cast<std::int64_t>(out.dv.size()) != p.kv_elems())
    throw backend_error(fmt::format("runner returned gradients of {}, {}, {} values, expected {}, {}, {}",
                                    out.dq.size(), out.dk.size(), out.dv.size(), p.q_elems(), p.kv_elems(),
                                    p.kv_elems()));
  const auto& g = cache.gradients(p);
  problem keys = p;  // dK and dV rows as compare_rows reads them: flat row r at r * d
  keys.H = p.Hkv;
  keys.Nq = p.Nkv;
  const error_report dq = compare_rows(p, out.dq, {}, g.q_rows, g.dq, {});
  const error_report dk = compare_rows(keys, out.dk, {}, g.kv_rows, g.dk, {});
  const error_report dv = compare_rows(keys, out.dv, {}, g.kv_rows, g.dv, {});
  v.grads_checked = true;
  v.dq_err = dq.nonfinite ? NAN : dq.rel_l2;
  v.dk_err = dk.nonfinite ? NAN : dk.rel_l2;
  v.dv_err = dv.nonfinite ? NAN : dv.rel_l2;
  v.grad_nonfinite = count_nonfinite(out.dq) + count_nonfinite(out.dk) + count_nonfinite(out.dv);
  v.grad_err = v.grad_nonfinite > 0 ? NAN : std::max({v.dq_err, v.dk_err, v.dv_err});
  v.grad_tolerance = grad_tolerance(p.type);
  v.grad_checked_rows = static_cast<std::int64_t>(g.q_rows.size() + g.kv_rows.size());
  // NaN compares false: a non-finite gradient never passes.
  v.err_ok = v.err_ok && v.grad_nonfinite == 0 && v.grad_err <= v.grad_tolerance;
}

}  // namespace

std::string validation_failure(const problem& p, const validation_result& v) {
  if (v.grads_checked && v.grad_nonfinite > 0)
    return fmt::format("non-finite gradients: {} element{} of dQ, dK and dV", v.grad_nonfinite,
                       v.grad_nonfinite == 1 ? "" : "s");
  if (!v.checked || v.nonfinite_outputs == 0) return {};
  const row_index at = split_row(p, std::max<std::int64_t>(v.first_bad_row, 0));
  return fmt::format("non-finite outputs: {} element{} in {} row{} of {}, the first at (b {}, h {}, row {})",
                     v.nonfinite_outputs, v.nonfinite_outputs == 1 ? "" : "s", v.nonfinite_rows,
                     v.nonfinite_rows == 1 ? "" : "s", p.rows(), at.b, at.h, at.i);
}

validation_run validate(backend& be, runner& r, const configuration& c, reference_cache& cache) {
  validation_run run;
  r.poison_outputs();
  const auto t0 = std::chrono::steady_clock::now();
  r.run();
  be.synchronize();
  run.run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const host_outputs out = r.get_outputs();
  validation_result& v = run.result;
  v.counted_bytes = r.counted_bytes();
  const auto& ref = cache.reference(c.p, c.row->math);
  if (static_cast<std::int64_t>(out.o.size()) != c.p.o_elems())
    throw backend_error(fmt::format("runner returned {} output values, expected {}", out.o.size(), c.p.o_elems()));
  const bool check_lse =
      c.row->writes_lse && !ref.lse.empty() && static_cast<std::int64_t>(out.lse.size()) == c.p.rows();
  const error_report e =
      compare_rows(c.p, out.o, check_lse ? std::span<const float>(out.lse) : std::span<const float>(), ref.rows, ref.o,
                   check_lse ? std::span<const double>(ref.lse) : std::span<const double>());
  v.checked = true;
  v.rel_err = e.nonfinite ? NAN : e.rel_l2;
  v.max_abs_err = e.max_abs;
  v.lse_err = e.lse_max_abs;
  v.checked_rows = static_cast<std::int64_t>(ref.rows.size());
  v.tolerance = sweep_tolerance(c.p.type);

  // Every output: where the backend keeps them, else on the host copy.
  const problem& p = c.p;
  const std::vector<std::uint8_t>& empty = cache.rows_without_keys(p);
  std::optional<full_check> f = be.check_outputs(r, cache.inputs(p), c.row->math, empty);
  if (!f) {
    const reference_all_rows* all = cache.all_rows(p, c.row->math, be.free_memory_bytes());
    const bool all_lse = all && check_lse && !all->lse.empty();
    f = check_rows_host(p, out.o, check_lse ? std::span<const float>(out.lse) : std::span<const float>(), empty,
                        all ? std::span<const float>(all->o) : std::span<const float>(),
                        all_lse ? std::span<const float>(all->lse) : std::span<const float>());
  }
  v.rows_total = p.rows();
  // The sample's bad elements are among the scan's; the larger count guards a scan that missed one.
  v.nonfinite_outputs = std::max(f->bad, e.nonfinite);
  v.nonfinite_rows = std::max<std::int64_t>(f->bad_rows, e.nonfinite > 0 ? 1 : 0);
  v.first_bad_row = f->first_bad_row >= 0 ? f->first_bad_row : (e.nonfinite > 0 ? e.first_bad_row : -1);
  v.rows_checked = f->rows_compared > 0 ? p.rows() : v.checked_rows;
  // The worst row of both comparisons: every row against fp32, the sample against fp64.
  v.worst_row_err = e.worst_row >= 0 ? e.worst_row_err : NAN;
  v.worst_row = e.worst_row;
  if (f->worst_row >= 0 && (v.worst_row < 0 || f->worst_err > v.worst_row_err)) {
    v.worst_row_err = f->worst_err;
    v.worst_row = f->worst_row;
  }
  if (v.worst_row >= 0) {
    const row_index at = split_row(p, v.worst_row);
    v.worst_at = {at.b, at.h, at.i};
  }
  v.row_tolerance = row_tolerance(p.type);
  v.err_ok = e.ok(v.tolerance) && v.nonfinite_outputs == 0 && (v.worst_row < 0 || v.worst_row_err <= v.row_tolerance);
  if (ref.e2e_o.empty()) {
    v.e2e_rel_err = v.rel_err;  // fp32: the inputs are the originals
  } else {
    const error_report e2e = compare_rows(c.p, out.o, {}, ref.rows, ref.e2e_o, {});
    v.e2e_rel_err = e2e.nonfinite ? NAN : e2e.rel_l2;
  }
  if (c.p.type == dtype::e4m3) v.scales = cache.inputs(c.p).scales;
  if (c.p.pass != pass_kind::fwd) check_gradients(c.p, out, cache, v);
  if (approximates_softmax(c.row->math)) {
    const auto& exact = cache.reference(c.p, attention_math::softmax);  // the same sampled rows
    const error_report d = compare_rows(c.p, out.o, {}, exact.rows, exact.o, {});
    v.approx_err_vs_exact = d.nonfinite ? NAN : d.rel_l2;
  }
  return run;
}

}  // namespace attnbench
