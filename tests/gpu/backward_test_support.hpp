// The backward's GPU test helpers (docs/backward.md), shared by the tests of the rows
// that claim bwd / fwd_bwd (tests/gpu/test_unfused_bwd.cpp, test_cudnn_sdpa.cpp): one run
// from poisoned gradients, every element of dQ, dK and dV against the fp64 reference.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reference/backward_reference.hpp"
#include "tests/gpu/cuda_cases.hpp"

namespace attnbench::testing {

inline problem with_pass(problem p, pass_kind k) {
  p.pass = k;
  return p;
}

inline double rel_l2(const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return NAN;
  double num = 0, den = 0;
  for (std::size_t x = 0; x < want.size(); ++x) {
    if (!std::isfinite(got[x])) return NAN;
    num += (got[x] - want[x]) * (got[x] - want[x]);
    den += want[x] * want[x];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

struct grad_run {
  host_inputs in;
  host_outputs out;
  double dq = NAN, dk = NAN, dv = NAN;
  double worst() const { return std::isnan(dq + dk + dv) ? NAN : std::max({dq, dk, dv}); }
};

// One bwd / fwd_bwd run from poisoned outputs, every gradient element against fp64.
inline grad_run run_backward(const variant& v, const problem& p, std::uint64_t seed = 1234) {
  grad_run g;
  g.in = make_inputs(p, seed);
  g.in.d_o = make_grad_output(p, seed + 1);
  auto r = v.make(p);
  r->set_inputs(g.in);
  r->poison_outputs();
  r->run();
  sync_device();
  g.out = r->get_outputs();
  std::vector<std::int64_t> kv_rows(static_cast<std::size_t>(p.B * p.Hkv * p.Nkv));
  for (std::size_t x = 0; x < kv_rows.size(); ++x) kv_rows[x] = static_cast<std::int64_t>(x);
  const reference_grads ref = reference_softmax_backward(g.in, all_rows(p), kv_rows);
  g.dq = rel_l2(g.out.dq, ref.dq);
  g.dk = rel_l2(g.out.dk, ref.dk);
  g.dv = rel_l2(g.out.dv, ref.dv);
  return g;
}

// The error of the cuBLAS unfused backward on p (the same-precision baseline).
inline double baseline_grad_error(const problem& p) {
  const variant* base = find_variant("cublas_unfused", backend_kind::cuda);
  EXPECT_NE(base, nullptr);
  return base ? run_backward(*base, p).worst() : NAN;
}

}  // namespace attnbench::testing
