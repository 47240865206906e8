// The approximation rows on CUDA (kernels/cuda/approx): performer against the fp64 evaluation
// of the same approximation (the same seeded features: kernels/reference/approx_reference.cpp),
// fp32 within 1e-5 as the CPU rows, on ragged lengths, Nq != Nkv (rows with no key when causal),
// GQA, Nq = 1, d = 32 .. 256, chunks Bc 16 and 64; performer also with a key and a query aligned with a
// random feature, whose unstabilised features overflow fp32 (the stabilisers must keep them
// finite).
// The distance to exact attention is the harness's (approx_err_vs_exact), not a
// check here. Host-only checks (rows mirror the CPU rows, models) run without a GPU; the rest
// also run under the emulator (emu.performer_routing).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "kernels/models/models.hpp"
#include "kernels/reference/approx_params.hpp"
#include "tests/gpu/cuda_cases.hpp"

namespace attnbench::testing {
namespace {

const variant& cuda_row(const char* name) {
  const variant* v = find_variant(name, backend_kind::cuda);
  if (!v) throw std::runtime_error(std::string("no cuda row ") + name);
  return *v;
}

// Every row of v on p with inputs `in` against the fp64 reference.
error_report check_all_rows(const variant& v, const host_inputs& in) {
  const problem& p = in.p;
  auto r = v.make(p);
  r->set_inputs(in);
  r->poison_outputs();
  r->run();
  sync_device();
  const host_outputs out = r->get_outputs();
  const std::vector<std::int64_t> rows = all_rows(p);
  const reference_rows ref = reference_for(v.math, in, rows);
  return compare_rows(p, out.o, {}, rows, ref.o, {});
}

void expect_all_rows_close(const variant& v, const host_inputs& in, const char* what = "") {
  SCOPED_TRACE(v.name + " " + describe(in.p) + " " + what);
  const error_report e = check_all_rows(v, in);
  EXPECT_EQ(e.nonfinite, 0) << "first bad row " << e.first_bad_row;
  EXPECT_LE(e.rel_l2, fp32_tol) << "max abs " << e.max_abs << " first bad row " << e.first_bad_row;
}
void expect_all_rows_close(const variant& v, const problem& p) { expect_all_rows_close(v, make_inputs(p, 1234)); }

TEST(CudaPerformerRoutingHost, RowsMirrorTheCpuRows) {
  for (const char* name : {"performer"}) {
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

}  // namespace
}  // namespace attnbench::testing
