// Test-only registry rows for the harness tests: a softmax "variant" whose
// runner computes O with the fp64 reference, plus misbehaving ones (NaN
// output, non-sticky and sticky backend errors, too much memory) and one that
// counts its model evaluations. They are never added to the registry; tests
// pass them to expand()/run_sweep directly.
#pragma once

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "harness/backend.hpp"
#include "kernels/models/models.hpp"
#include "harness/tensors.hpp"
#include "kernels/reference/attention_reference.hpp"

namespace attnbench::testing_rows {

enum class mode { good, nan_output, throws, throws_sticky, huge, throws_in_timing, sticky_in_timing };

class ref_runner final : public runner {
 public:
  ref_runner(problem p, mode m) : p_(p), mode_(m) {}
  void set_inputs(const host_inputs& in) override {
    in_ = in;
    in_.p = p_;
  }
  void poison_outputs() override {
    out_.o.assign(p_.o_elems(), std::numeric_limits<float>::quiet_NaN());
    out_.lse.assign(p_.rows(), std::numeric_limits<float>::quiet_NaN());
  }
  void run() override {
    if (mode_ == mode::throws) throw backend_error("test row: launch failed");
    if (mode_ == mode::throws_sticky) throw backend_error("test row: illegal address", true);
    ++runs_;  // validation run, warm-up, then the timed ones
    if (mode_ == mode::throws_in_timing && runs_ > 2) throw backend_error("test row: timeout in run 3");
    if (mode_ == mode::sticky_in_timing && runs_ > 2) throw backend_error("test row: sticky in run 3", true);
    const auto rows = all_rows(p_);
    const reference_rows r = reference_softmax(in_, rows);
    for (std::size_t i = 0; i < r.o.size(); ++i) out_.o[i] = static_cast<float>(r.o[i]);
    for (std::size_t i = 0; i < r.lse.size(); ++i) out_.lse[i] = static_cast<float>(r.lse[i]);
    if (mode_ == mode::nan_output) out_.o[0] = std::numeric_limits<float>::quiet_NaN();
  }
  host_outputs get_outputs() override { return out_; }
  std::int64_t counted_bytes() const override { return 123; }

 private:
  problem p_;
  mode mode_;
  host_inputs in_;
  host_outputs out_;
  int runs_ = 0;
};

inline variant make_row(std::string name, mode m) {
  return {
      .name = std::move(name),
      .summary = "test row",
      .writes_lse = true,
      .check =
          [](const problem& p) {
            return p.mask.kind == mask_kind::local ? support::no("test row: no local masks") : support::yes();
          },
      .model =
          [](const problem& p) {
            return model_figures{model_flops_softmax(p), model_flops_softmax(p), model_bytes_min(p)};
          },
      .memory_bytes = [m](const problem& p) -> std::int64_t {
        return m == mode::huge ? (std::int64_t{1} << 60) : 8 * (p.q_elems() + 2 * p.kv_elems());
      },
      .make_runner = [m](const problem& p, bool) { return std::make_unique<ref_runner>(p, m); },
  };
}

// good, nan, fail, sticky, huge, late (fails inside the timing loop), late_sticky
inline const std::vector<variant>& rows() {
  static const std::vector<variant> r = {make_row("t_good", mode::good),
                                         make_row("t_nan", mode::nan_output),
                                         make_row("t_fail", mode::throws),
                                         make_row("t_sticky", mode::throws_sticky),
                                         make_row("t_huge", mode::huge),
                                         make_row("t_late", mode::throws_in_timing),
                                         make_row("t_late_sticky", mode::sticky_in_timing)};
  return r;
}

// A t_good row named t_count whose model counts its evaluations in *calls: the
// harness evaluates it once per configuration it runs.
inline variant counting_row(int* calls) {
  variant v = make_row("t_count", mode::good);
  v.model = [calls, inner = v.model](const problem& p) {
    ++*calls;
    return inner(p);
  };
  return v;
}

inline const variant* row(const std::string& name) {
  for (const auto& v : rows())
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace attnbench::testing_rows
