// The cublas_unfused backward (bwd and fwd_bwd, docs/backward.md) against the
// fp64 CPU backward reference on the small shapes of tests/gpu/cuda_cases.hpp
// (ragged, Nq != Nkv both ways, GQA 1/2/8/all, decode, d 40/256, empty rows)
// under every softmax mask, fp32/fp16/bf16, from poisoned gradients: every
// element of dQ, dK and dV. It is the same-precision baseline the sweep's
// gradient tolerances come from (harness/tensors.cpp grad_tolerance), so its
// measured errors are printed (GRAD_ERR lines) and held to that tolerance.
// Host-only checks (rows, models) run without a GPU; all run under tests/emu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "kernels/models/models.hpp"
#include "tests/gpu/backward_test_support.hpp"
#include "tests/gpu/cuda_cases.hpp"

namespace attnbench::testing {
namespace {

const variant& cublas_unfused() {
  const variant* v = find_variant("cublas_unfused", backend_kind::cuda);
  if (!v) throw std::runtime_error("no cuda row cublas_unfused");
  return *v;
}

// fp32 computes in fp32 throughout (cuBLAS CUBLAS_COMPUTE_32F, no TF32).
constexpr double fp32_grad_tol = 1e-5;

double grad_bound(dtype t) { return t == dtype::fp32 ? fp32_grad_tol : grad_tolerance(t); }

// ---- host-only ----------------------------------------------------------------
TEST(CudaUnfusedBwdHost, RowClaimsEveryPass) {
  const variant& v = cublas_unfused();
  EXPECT_EQ(v.caps.passes, static_cast<unsigned>(pass_all));
  for (pass_kind k : {pass_kind::bwd, pass_kind::fwd_bwd})
    for (dtype t : {dtype::fp32, dtype::fp16, dtype::bf16}) {
      const problem p = with_pass(make_problem({1, 8, 2, 100, 70, 64}, t, "causal"), k);
      EXPECT_TRUE(v.supports(p).ok) << describe(p) << ": " << v.supports(p).reason;
    }
}

TEST(CudaUnfusedBwdHost, ModelAndMemoryByHand) {
  // B 1, H 2, Hkv 1, Nq 32, Nkv 48, d 16, bf16: every term of the backward by hand.
  const problem p = with_pass(make_problem({1, 2, 1, 32, 48, 16}, dtype::bf16, "none"), pass_kind::bwd);
  const double e = 2, q = 2 * 32 * 16, kv = 48 * 16, s = 2 * 32 * 48;
  const double bytes = (e * q + e * kv + 4 * s) + (e * q + e * s + e * kv) + (2 * e * q + 4 * s + 2 * e * s) +
                       (e * s + e * kv + e * q) + (e * s + e * q + e * kv);
  const model_figures b = cublas_unfused().model(p);
  EXPECT_DOUBLE_EQ(b.bytes, bytes);
  EXPECT_DOUBLE_EQ(b.flops_executed, 8.0 * 16 * s);
  EXPECT_DOUBLE_EQ(b.flops, 2.5 * model_flops_softmax(with_pass(p, pass_kind::fwd)));
  EXPECT_EQ(b.exps, 0);
  const model_figures f = cublas_unfused().model(with_pass(p, pass_kind::fwd));
  const model_figures fb = cublas_unfused().model(with_pass(p, pass_kind::fwd_bwd));
  EXPECT_DOUBLE_EQ(fb.bytes, f.bytes + b.bytes);
  EXPECT_DOUBLE_EQ(fb.flops, 3.5 * f.flops);
  // Admission: the forward's memory plus dO, dQ, dK, dV and dS.
  EXPECT_EQ(cublas_unfused().memory_bytes(p), cublas_unfused().memory_bytes(with_pass(p, pass_kind::fwd)) +
                                                  static_cast<std::int64_t>(e * (2 * q + 2 * kv + s)));
}

// ---- GPU ------------------------------------------------------------------------
TEST(CudaUnfusedBwd, MatchesFp64ReferenceOnSmallShapes) {
  ATTN_REQUIRE_GPU();
  std::map<dtype, double> worst;
  for (const shape& s : small_shapes())
    for (const std::string& m : softmax_masks())
      for (dtype t : {dtype::fp32, dtype::fp16, dtype::bf16}) {
        const problem p = with_pass(make_problem(s, t, m), pass_kind::bwd);
        SCOPED_TRACE(describe(p));
        const grad_run g = run_backward(cublas_unfused(), p);
        EXPECT_LE(g.dq, grad_bound(t));
        EXPECT_LE(g.dk, grad_bound(t));
        EXPECT_LE(g.dv, grad_bound(t));
        worst[t] = std::max(worst[t], g.worst());
      }
  for (const auto& [t, e] : worst)
    std::printf("GRAD_ERR cublas_unfused %s worst rel-L2 %.3g\n", std::string(to_string(t)).c_str(), e);
}

TEST(CudaUnfusedBwd, FwdBwdWritesOutputAndGradients) {
  ATTN_REQUIRE_GPU();
  // fwd_bwd poisons O and lse too: the timed forward must rewrite them.
  for (dtype t : {dtype::fp32, dtype::bf16})
    for (const char* m : {"none", "causal"}) {
      const problem p = with_pass(make_problem({2, 4, 2, 70, 45, 32}, t, m), pass_kind::fwd_bwd);
      SCOPED_TRACE(describe(p));
      const grad_run g = run_backward(cublas_unfused(), p);
      EXPECT_LE(g.worst(), grad_bound(t));
      const std::vector<std::int64_t> rows = all_rows(p);
      const reference_rows ref = reference_for(attention_math::softmax, g.in, rows);
      const error_report e = compare_rows(p, g.out.o, g.out.lse, rows, ref.o, ref.lse);
      EXPECT_EQ(e.nonfinite, 0);
      EXPECT_LE(e.rel_l2, t == dtype::fp32 ? fp32_tol : fixed_bound(t));
    }
}

TEST(CudaUnfusedBwd, EmptyRowsAndUnseenKeysHaveZeroGradients) {
  ATTN_REQUIRE_GPU();
  // Causal, Nq 70 > Nkv 45 bottom-right: query rows 0..24 see no key (dQ = 0); local:0,0
  // with Nq 20 < Nkv 45: keys 0..24 are seen by no query (dK = dV = 0).
  const problem a = with_pass(make_problem({1, 4, 2, 70, 45, 32}, dtype::bf16, "causal"), pass_kind::bwd);
  const grad_run ga = run_backward(cublas_unfused(), a);
  for (std::int64_t z = 0; z < a.B * a.H; ++z)
    for (std::int64_t i = 0; i < a.Nq - a.Nkv; ++i)
      for (std::int64_t c = 0; c < a.d; ++c)
        ASSERT_EQ(ga.out.dq[static_cast<std::size_t>((z * a.Nq + i) * a.d + c)], 0.f);
  const problem b = with_pass(make_problem({1, 4, 2, 20, 45, 32}, dtype::fp16, "local:0,0"), pass_kind::bwd);
  const grad_run gb = run_backward(cublas_unfused(), b);
  for (std::int64_t z = 0; z < b.B * b.Hkv; ++z)
    for (std::int64_t j = 0; j < b.Nkv - b.Nq; ++j)
      for (std::int64_t c = 0; c < b.d; ++c) {
        const std::size_t x = static_cast<std::size_t>((z * b.Nkv + j) * b.d + c);
        ASSERT_EQ(gb.out.dk[x], 0.f);
        ASSERT_EQ(gb.out.dv[x], 0.f);
      }
  EXPECT_LE(ga.worst(), grad_bound(a.type));
  EXPECT_LE(gb.worst(), grad_bound(b.type));
}

TEST(CudaUnfusedBwd, RepeatedRunsDoNotAccumulate) {
  ATTN_REQUIRE_GPU();
  // run() three times on one runner (as the timing loop does): the same gradients.
  const problem p = with_pass(make_problem({1, 4, 2, 50, 90, 64}, dtype::bf16, "causal"), pass_kind::bwd);
  host_inputs in = make_inputs(p, 5);
  in.d_o = make_grad_output(p, 6);
  auto r = cublas_unfused().make(p);
  r->set_inputs(in);
  r->poison_outputs();
  r->run();
  sync_device();
  const host_outputs a = r->get_outputs();
  r->run();
  r->run();
  sync_device();
  const host_outputs b = r->get_outputs();
  EXPECT_EQ(a.dq, b.dq);
  EXPECT_EQ(a.dk, b.dk);
  EXPECT_EQ(a.dv, b.dv);
}

}  // namespace
}  // namespace attnbench::testing
