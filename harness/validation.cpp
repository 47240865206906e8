#include "harness/validation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>

#include "harness/backend.hpp"
#include "kernels/reference/attention_reference.hpp"

namespace attnbench {

std::int64_t validation_rows(const problem& p) {
  // ~3e8 fp64 multiply-adds of the reference per configuration.
  const double per_row = 2.0 * double(p.Nkv) * double(p.d);
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(3e8 / per_row), 16, 256);
}

problem reference_cache::shape_of(problem p) {
  p.Br = p.Bc = 64;
  p.mask = {};
  return p;
}

problem reference_cache::problem_of(problem p) {
  p.Br = p.Bc = 64;
  return p;
}

reference_cache::reference_cache() : reference_cache([](const problem& p) { return make_original_inputs(p); }) {}

reference_cache::reference_cache(originals_maker make_originals) : make_originals_(std::move(make_originals)) {}

void reference_cache::keep_only(const problem& p) {
  if (!(problem_ == problem_of(p))) {
    refs_[0].reset();
    refs_[1].reset();
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
  auto& slot = refs_[m == attention_math::softmax ? 0 : 1];
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
    throw backend_error(fmt::format("runner returned {} output values, expected {}", out.o.size(),
                                    c.p.o_elems()));
  const bool check_lse = c.row->writes_lse && !ref.lse.empty() &&
                         static_cast<std::int64_t>(out.lse.size()) == c.p.rows();
  const error_report e =
      compare_rows(c.p, out.o, check_lse ? std::span<const float>(out.lse) : std::span<const float>(),
                   ref.rows, ref.o, check_lse ? std::span<const double>(ref.lse) : std::span<const double>());
  v.checked = true;
  v.rel_err = e.nonfinite ? NAN : e.rel_l2;
  v.max_abs_err = e.max_abs;
  v.lse_err = e.lse_max_abs;
  v.checked_rows = static_cast<std::int64_t>(ref.rows.size());
  v.tolerance = sweep_tolerance(c.p.type);
  v.err_ok = e.ok(v.tolerance);
  if (ref.e2e_o.empty()) {
    v.e2e_rel_err = v.rel_err;  // fp32: the inputs are the originals
  } else {
    const error_report e2e = compare_rows(c.p, out.o, {}, ref.rows, ref.e2e_o, {});
    v.e2e_rel_err = e2e.nonfinite ? NAN : e2e.rel_l2;
  }
  if (c.p.type == dtype::e4m3) v.scales = cache.inputs(c.p).scales;
  return run;
}

}  // namespace attnbench
