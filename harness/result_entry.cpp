#include "harness/result_entry.hpp"

#include <cmath>
#include <fmt/format.h>

#include "harness/json_output.hpp"

namespace attnbench {

result_entry make_result(const configuration& c, measurement m, std::optional<model_figures> model) {
  result_entry r{c.name, model, std::move(m), {}};
  r.json = make_entry(c, r.m, r.model);
  return r;
}

std::string console_line(const result_entry& r, bool profiled) {
  const measurement& m = r.m;
  if (profiled && m.status == "ok") return fmt::format("{:<90} profiled (rel_err {:.1e})", r.name, m.val.rel_err);
  if (m.status != "ok") return fmt::format("{:<90} {}: {}", r.name, m.status, m.message);
  const entry_figures f = figures_of(m, r.model);
  const bool have_err = m.val.checked && std::isfinite(m.val.rel_err);
  const std::string err = have_err ? fmt::format("{:.1e}", m.val.rel_err) : "nan";
  auto finite = [](double x) { return std::isfinite(x) ? x : NAN; };  // as the JSON's nulls print
  // Rounded inputs: the error against the unrounded fp32 inputs too (fp32 copies rel_err).
  const std::string e2e = have_err && std::isfinite(m.val.e2e_rel_err) && m.val.e2e_rel_err != m.val.rel_err
                              ? fmt::format(" (e2e {:.1e})", m.val.e2e_rel_err)
                              : "";
  // A worst row above its tolerance: where, as entry_line prints it from the JSON.
  const validation_result& v = m.val;
  const std::string worst =
      v.checked && v.worst_row >= 0 && std::isfinite(v.worst_row_err) && v.worst_row_err > v.row_tolerance
          ? worst_row_text(v.worst_row_err, v.worst_at.b, v.worst_at.h, v.worst_at.i)
          : "";
  // Backward: the worst gradient's error beside O's (docs/backward.md).
  const std::string grad = v.grads_checked ? fmt::format(" grad {:.1e}", v.grad_err) : "";
  return fmt::format("{:<90} {:10.4f} ms {:8.3f} TFLOP/s {:8.1f} GB/s  err {}{}{}{} {}", r.name,
                     f.timed ? f.time.median : NAN, finite(f.tflops), finite(f.gbps), err, e2e, worst, grad,
                     m.val.checked && m.val.err_ok ? "ok" : "ABOVE TOLERANCE");
}

}  // namespace attnbench
