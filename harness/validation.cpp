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

void reference_cache::keep_only(const problem& p) {
  if (!(problem_ == problem_of(p))) {
    refs_[0].reset();
    refs_[1].reset();
  }
  if (inputs_ && !(shape_ == shape_of(p))) inputs_.reset();
}

host_inputs& reference_cache::inputs(const problem& p) {
  keep_only(p);
  if (!inputs_) {
    inputs_ = std::make_unique<host_inputs>(make_inputs(shape_of(p)));
    shape_ = shape_of(p);
  }
  problem_ = problem_of(p);
  inputs_->p = p;  // mask and tiles of the current configuration; the data do not depend on them
  return *inputs_;
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
  return run;
}

}  // namespace attnbench
