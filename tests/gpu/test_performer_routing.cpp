// The approximation rows on CUDA (kernels/cuda/approx): performer and routing against the fp64
// evaluation of the same approximation (the same seeded features and centroids:
// kernels/reference/approx_reference.cpp),
// fp32 within 1e-5 as the CPU rows, on ragged lengths, Nq != Nkv (rows with no key when causal),
// GQA, Nq = 1, d = 32 .. 256, chunks Bc 16 and 64; performer also with a key and a query aligned with a
// random feature, whose unstabilised features overflow fp32 (the stabilisers must keep them
// finite); routing also with tied scores (ties to the lower position) and its phase times.
// The distance to exact attention is the harness's (approx_err_vs_exact), not a
// check here. Host-only checks (rows mirror the CPU rows, models) run without a GPU; the rest
// also run under the emulator (emu.performer_routing).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/models/models.hpp"
#include "kernels/reference/approx_params.hpp"
#include "tests/gpu/cuda_cases.hpp"

namespace attnbench::testing {
namespace {

void expect_all_rows_close(const variant& v, const host_inputs& in, const char* what = "") {
  SCOPED_TRACE(v.name + " " + describe(in.p) + " " + what);
  const error_report e = check_all_rows(v, in);
  EXPECT_EQ(e.nonfinite, 0) << "first bad row " << e.first_bad_row;
  EXPECT_LE(e.rel_l2, fp32_tol) << "max abs " << e.max_abs << " first bad row " << e.first_bad_row;
}
void expect_all_rows_close(const variant& v, const problem& p) { expect_all_rows_close(v, make_inputs(p, 1234)); }

TEST(CudaPerformerRoutingHost, RowsMirrorTheCpuRows) {
  for (const char* name : {"performer", "routing"}) {
    const variant& g = cuda_row(name);
    EXPECT_FALSE(g.writes_lse) << name;
    for (const char* m : {"none", "causal"})
      EXPECT_TRUE(g.supports(make_problem({1, 4, 2, 10, 30, 64}, dtype::fp32, m)).ok) << name << " " << m;
    for (const char* m : {"local:4,0", "causal+global:2"})
      EXPECT_FALSE(g.supports(make_problem({1, 4, 2, 10, 30, 64}, dtype::fp32, m)).ok) << name << " " << m;
    EXPECT_FALSE(g.supports(make_problem({1, 4, 2, 10, 30, 64}, dtype::bf16, "none")).ok) << name;
    const variant* c = find_variant(name, backend_kind::cpu);
    if (!c) continue;  // the emulator links a stub without CPU rows
    EXPECT_EQ(g.math, c->math) << name;
    EXPECT_EQ(g.caps.masks, c->caps.masks) << name;
  }
}

TEST(CudaPerformerRoutingHost, PerformerModel) {
  for (const char* m : {"none", "causal"}) {
    const problem p = make_problem({2, 4, 2, 100, 300, 64}, dtype::fp32, m, 64, 32);
    const model_figures g = cuda_row("performer").model(p), c = model_performer(p);
    EXPECT_DOUBLE_EQ(g.flops, c.flops) << m;  // the CPU row's useful FLOPs
    EXPECT_GE(g.flops_executed, g.flops) << m;
    EXPECT_GT(g.bytes, model_bytes_min(p)) << m;
    EXPECT_GT(cuda_row("performer").memory_bytes(p), static_cast<std::int64_t>(g.bytes / 64)) << m;
  }
  // Non-causal, by hand: B 1, H 2, Hkv 1, Nq 20, Nkv 40, d 16, m 256.
  const problem p = make_problem({1, 2, 1, 20, 40, 16}, dtype::fp32, "none");
  const double omega = 16 * 256 * 4, state = 256 * 17 * 4;
  const double keys = 3 * (omega + 4) + 40 * (16 + 256) * 4;  // 3 blocks of 16 keys
  const double queries = 2 * (2 * omega + 20 * (16 + 256) * 4);
  const double reduce = (3 + 1) * 4;
  const double state_pass = 40 * 256 * 4 + 8 * (40 * 16 * 4 + 4) + state;  // 8 blocks of 32 features
  const double out = 2 * (2 * state + 20 * (256 + 16) * 4);
  EXPECT_DOUBLE_EQ(model_performer_cuda(p).bytes, keys + queries + reduce + state_pass + out);
  EXPECT_DOUBLE_EQ(model_performer_cuda(p).exps, (2 * 20 + 40) * 256.0);
}

TEST(CudaPerformerRouting, PerformerMatchesFp64Reference) {
  ATTN_REQUIRE_GPU();
  for (const shape& s : small_shapes())
    for (const char* m : {"none", "causal"})
      for (std::int64_t bc : {16, 64})
        expect_all_rows_close(cuda_row("performer"), make_problem(s, dtype::fp32, m, 64, bc));
  expect_all_rows_close(cuda_row("performer"), make_problem({4, 2, 2, 83, 50, 8}, dtype::fp32, "causal", 64, 16));
}

// A key and a query set to d^1/4 omega_f, the input whose feature f is largest: u_f =
// |omega_f|^2 / 2, about 128 at d = 256, past fp32's exp range (88.7). The stabilisers bring
// every exponent to <= 0; without them the features are inf and O is inf / inf. That key
// dominates every row's weights in the fp64 evaluation too (by ~e^100), which the check sees.
// (A query aligned with another feature than the key's gets 0 / 0 in fp32: its one
// non-negligible feature is e^-150 below the keys' common stabiliser in every key.)
TEST(CudaPerformerRouting, PerformerStableOnAlignedInputs) {
  ATTN_REQUIRE_GPU();
  const std::int64_t d = 256, m = performer_default_features;
  const std::vector<float> w = make_performer_features(m, d);
  const float c = std::pow(static_cast<float>(d), 0.25f);
  for (const char* mask : {"none", "causal"}) {
    const problem p = make_problem({2, 2, 1, 20, 40, d}, dtype::fp32, mask, 64, 16);
    host_inputs in = make_inputs(p, 77);
    for (std::int64_t b = 0; b < p.B; ++b)
      for (std::int64_t x = 0; x < d; ++x) {
        in.k[(b * p.Nkv + 3) * d + x] = c * w[(5 + b) * d + x];             // key 3 of each batch element
        in.q[((b * p.H + 1) * p.Nq + 7) * d + x] = c * w[(5 + b) * d + x];  // query 7 of head 1
      }
    expect_all_rows_close(cuda_row("performer"), in, "aligned key 3, query 7");
  }
}

TEST(CudaPerformerRoutingHost, RoutingModelPhases) {
  for (const char* m : {"none", "causal"}) {
    const problem p = make_problem({2, 4, 2, 100, 300, 64}, dtype::fp32, m);
    const std::vector<model_phase> g = cuda_row("routing").model_phases(p), c = model_routing_phases(p);
    ASSERT_EQ(g.size(), 2u);
    model_figures sum;
    for (std::size_t i = 0; i < g.size(); ++i) {
      EXPECT_EQ(g[i].name, c[i].name);
      EXPECT_DOUBLE_EQ(g[i].figures.flops, c[i].figures.flops) << g[i].name;
      EXPECT_GT(g[i].figures.bytes, 0) << g[i].name;
      sum.bytes += g[i].figures.bytes;
      sum.exps += g[i].figures.exps;
    }
    EXPECT_DOUBLE_EQ(cuda_row("routing").model(p).bytes, sum.bytes);
    EXPECT_DOUBLE_EQ(cuda_row("routing").model(p).exps, sum.exps);
  }
  // By hand: B 1, H 1, Hkv 1, Nq = Nkv = 16, d 8: c = 4, w = 4; one block everywhere.
  const problem p = make_problem({1, 1, 1, 16, 16, 8}, dtype::fp32, "none");
  const double side = 16 * 8 * 4 + 4 * 8 * 4 + 4 * 16 * 8 + 4 * (16 * 8 + 16 * 8 + 16) + 4 * (16 + 4 * 4);
  const double route = 2 * side + 4 * 16 * 4;  // the queries' slots
  const double attention = 4 * (4 * 4 + 4 * 8 * 4 + 16 * (4 + 2 * 8 * 4) + 4 * 8 * 4 + 4);
  const double mean = 16 * 4 * 4 + 4 * 4 * (1 + 8 * 4) + 16 * 8 * 4;
  const std::vector<model_phase> g = model_routing_cuda_phases(p);
  EXPECT_DOUBLE_EQ(g[0].figures.bytes, route);
  EXPECT_DOUBLE_EQ(g[1].figures.bytes, attention + mean);
}

TEST(CudaPerformerRouting, RoutingMatchesFp64Reference) {
  ATTN_REQUIRE_GPU();
  for (const shape& s : small_shapes())
    for (const char* m : {"none", "causal"})
      expect_all_rows_close(cuda_row("routing"), make_problem(s, dtype::fp32, m));
  expect_all_rows_close(cuda_row("routing"), make_problem({4, 2, 2, 83, 50, 8}, dtype::fp32, "causal"));
  expect_all_rows_close(cuda_row("routing"), make_problem({1, 2, 1, 300, 600, 32}, dtype::fp32, "causal"));
}

// Tokens in equal pairs (rows 2t and 2t + 1 of Q and of K the same): every score ties with its
// pair's, and the lower position must go first, as the reference's stable sort takes it.
TEST(CudaPerformerRouting, RoutingTiesGoToTheLowerPosition) {
  ATTN_REQUIRE_GPU();
  for (const char* m : {"none", "causal"}) {
    const problem p = make_problem({1, 2, 1, 45, 61, 16}, dtype::fp32, m);
    host_inputs in = make_inputs(p, 5);
    for (std::vector<float>* x : {&in.q, &in.k}) {
      const std::int64_t n = static_cast<std::int64_t>(x->size()) / p.d;
      for (std::int64_t r = 1; r < n; r += 2) std::copy_n(x->begin() + (r - 1) * p.d, p.d, x->begin() + r * p.d);
    }
    expect_all_rows_close(cuda_row("routing"), in, "tokens in equal pairs");
  }
}

TEST(CudaPerformerRouting, RoutingTimesItsPhases) {
  ATTN_REQUIRE_GPU();
  const problem p = make_problem({1, 2, 1, 40, 90, 32}, dtype::fp32, "causal");
  auto r = cuda_row("routing").make(p);
  r->set_inputs(make_inputs(p, 3));
  r->run();
  r->run();
  sync_device();
  const std::vector<phase_time> t = r->phase_times();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].name, "routing");
  EXPECT_EQ(t[1].name, "attention");
  for (const phase_time& x : t) EXPECT_TRUE(std::isfinite(x.seconds) && x.seconds >= 0) << x.name;
  EXPECT_EQ(r->phase_times()[0].seconds, t[0].seconds);  // each run counted once
}

}  // namespace
}  // namespace attnbench::testing
