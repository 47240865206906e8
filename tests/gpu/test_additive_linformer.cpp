// The CUDA rows additive and linformer (kernels/cuda/approx) against the fp64 evaluation of the
// same function (kernels/reference/approx_reference.cpp: the same seeded W, U, v, E, F), every
// row compared: ragged lengths (not tile multiples), Nq != Nkv, the decoder step Nq = 1, GQA,
// several key tiles, every mask kind the rows claim (additive: the interval masks); fp32 within 1e-5 (the CPU rows'
// bound), fp16/bf16 inputs (fp32 math) within the dtype's fixed bound (tests/gpu/tolerance.hpp). Host-only checks (the
// rows mirror the CPU rows' math and models, refusals with reasons) run without a GPU; the rest skip without a device
// and run under the emulator (emu.additive_linformer).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "kernels/models/models.hpp"
#include "kernels/reference/approx_params.hpp"
#include "tests/gpu/cuda_cases.hpp"
#include "tests/gpu/tolerance.hpp"

namespace attnbench::testing {
namespace {

problem approx_problem(std::int64_t B, std::int64_t H, std::int64_t Hkv, std::int64_t Nq, std::int64_t Nkv,
                       std::int64_t d, const std::string& mask = "none", std::int64_t tile = 16,
                       dtype t = dtype::fp32) {
  return attnbench::make_problem(B, H, Hkv, Nq, Nkv, d, t, mask, tile, tile);
}

void expect_all_rows_close(const variant& v, const problem& p) {
  SCOPED_TRACE(v.name + " " + describe(p));
  ASSERT_TRUE(v.supports(p).ok) << v.supports(p).reason;
  const checked_run c = run_and_check(v, p);
  const double tol = p.type == dtype::fp32 ? fp32_tol : fixed_bound(p.type);
  EXPECT_EQ(c.err.nonfinite, 0) << "first bad row " << c.err.first_bad_row;
  EXPECT_LE(c.err.rel_l2, tol) << "max abs " << c.err.max_abs << " first bad row " << c.err.first_bad_row;
  EXPECT_EQ(c.out.lse.size(), static_cast<std::size_t>(p.rows()));
  EXPECT_LE(c.err.lse_max_abs, p.type == dtype::fp32 ? fp32_lse_tol : 1e-2);
}

// ---- additive -----------------------------------------------------------------------------

TEST(CudaAdditiveLinformerHost, AdditiveMirrorsTheCpuRow) {
  const variant& g = cuda_row("additive");
  EXPECT_TRUE(g.writes_lse);
  const variant* c = find_variant("additive", backend_kind::cpu);
  if (!c) GTEST_SKIP() << "no CPU rows linked (the emulator links a stub)";
  EXPECT_EQ(g.math, c->math);
  for (const problem& p : {approx_problem(1, 4, 2, 37, 53, 16, "causal"), approx_problem(2, 2, 2, 1, 70, 32)}) {
    EXPECT_EQ(g.model(p).flops, c->model(p).flops);
    EXPECT_EQ(g.model(p).bytes, c->model(p).bytes);
  }
}

// The CUDA tanh is ex2 + rcp: two multi-function ops per width element of every computed score
// (the CPU model counts one). Causal 40 x 40, d 8, 16 x 16 tiles: 1088 computed scores.
TEST(CudaAdditiveLinformerHost, AdditiveModelCountsTwoSfuOpsPerTanh) {
  const variant& g = cuda_row("additive");
  const problem p = approx_problem(1, 1, 1, 40, 40, 8, "causal");
  EXPECT_EQ(g.model(p).exps, model_exps_flash2(p) + 2.0 * 8 * 1088);
  EXPECT_EQ(g.model(p).flops, model_additive(p).flops);
  // fp16 inputs: Q, K, V read and O written in 2 bytes, Q', K', W, U, v, lse in 4.
  const problem h = approx_problem(1, 1, 1, 40, 40, 8, "causal", 16, dtype::fp16);
  EXPECT_LT(g.model(h).bytes, g.model(p).bytes);
  // Two bytes fewer per element of Q and K (projected once), V (16 + 32 + 40 keys walked) and O.
  EXPECT_EQ(g.model(p).bytes - g.model(h).bytes, 2.0 * 8 * ((40 + 40) + (16 + 32 + 40) + 40));
}

TEST(CudaAdditiveLinformerHost, AdditiveRefusals) {
  const variant& g = cuda_row("additive");
  EXPECT_FALSE(g.supports(approx_problem(1, 1, 1, 8, 8, 64, "none", 64, dtype::e4m3)).ok);
  // d = 256 with 64 x 64 tiles: ~274 KiB of shared memory per block, past the 227 KiB limit.
  const support big = g.supports(approx_problem(1, 1, 1, 64, 64, 256, "none", 64));
  EXPECT_FALSE(big.ok);
  EXPECT_NE(big.reason.find("additive Br=64 Bc=64 d=256"), std::string::npos) << big.reason;
  EXPECT_TRUE(g.supports(approx_problem(1, 1, 1, 64, 64, 256, "none", 32)).ok);
  // The interval masks only: the CPU row's sparse terms are refused (docs/approximations.md).
  EXPECT_TRUE(g.supports(approx_problem(1, 2, 1, 50, 83, 32, "local:5,3+global:2")).ok);
  EXPECT_FALSE(g.supports(approx_problem(1, 2, 1, 50, 83, 32, "causal+strided:3,4")).ok);
}

TEST(CudaAdditiveLinformer, AdditiveMatchesFp64Reference) {
  ATTN_REQUIRE_GPU();
  const variant& g = cuda_row("additive");
  expect_all_rows_close(g, approx_problem(1, 1, 1, 1, 70, 16));             // the decoder step
  expect_all_rows_close(g, approx_problem(1, 8, 2, 1, 130, 32, "causal"));  // decoder step, GQA 4:1
  for (const char* mask : {"none", "causal"}) expect_all_rows_close(g, approx_problem(2, 2, 2, 37, 37, 16, mask));
  expect_all_rows_close(g, approx_problem(1, 4, 2, 83, 50, 8, "causal"));  // Nq > Nkv: rows with no key
  for (const char* mask : {"local:5,3+global:2", "causal+global:3", "local:7,0"})
    expect_all_rows_close(g, approx_problem(1, 2, 1, 50, 83, 32, mask, 32));
  expect_all_rows_close(g, approx_problem(1, 2, 2, 70, 70, 64, "causal", 64));  // 64 x 64 tiles, ragged
  for (dtype t : {dtype::fp16, dtype::bf16})
    expect_all_rows_close(g, approx_problem(1, 2, 1, 45, 61, 32, "causal", 16, t));
}

// ---- linformer ----------------------------------------------------------------------------

TEST(CudaAdditiveLinformerHost, LinformerMirrorsTheCpuRow) {
  const variant& g = cuda_row("linformer");
  EXPECT_TRUE(g.writes_lse);
  // The same projections; the attention is cublas_unfused's over the k keys (S, P in memory).
  const problem p = approx_problem(1, 4, 2, 50, 300, 32);
  const problem r = linformer_reduced_problem(p);
  EXPECT_EQ(r.Nkv, 256);
  EXPECT_EQ(g.model(p).bytes, model_linformer_projection_bytes(p) + model_bytes_cublas_unfused(r));
  EXPECT_EQ(g.model(p).exps, model_exps_unfused_cuda(r));
  EXPECT_GT(g.memory_bytes(p), static_cast<std::int64_t>(model_bytes_min(p)));
  // docs/approximations.md's worked shape: H = Hkv = 8, N = 2048, d = 64 (k = 256).
  EXPECT_EQ(g.model(approx_problem(1, 8, 8, 2048, 2048, 64, "none", 64)).bytes, 42991616.0 + 93388800.0);
  const variant* c = find_variant("linformer", backend_kind::cpu);
  if (!c) GTEST_SKIP() << "no CPU rows linked (the emulator links a stub)";
  EXPECT_EQ(g.math, c->math);
  EXPECT_EQ(g.model(p).flops, c->model(p).flops);
}

TEST(CudaAdditiveLinformerHost, LinformerRefusesMasksAndLowPrecision) {
  const variant& g = cuda_row("linformer");
  for (const char* m : {"causal", "local:4,0", "global:2"}) {
    const support s = g.supports(approx_problem(2, 2, 2, 40, 40, 16, m));
    EXPECT_FALSE(s.ok) << m;
    EXPECT_NE(s.reason.find("none only"), std::string::npos) << s.reason;
  }
  EXPECT_FALSE(g.supports(approx_problem(1, 2, 2, 40, 40, 16, "none", 16, dtype::bf16)).ok);
  EXPECT_TRUE(g.supports(approx_problem(1, 2, 2, 40, 40, 16)).ok);
}

TEST(CudaAdditiveLinformer, LinformerMatchesFp64Reference) {
  ATTN_REQUIRE_GPU();
  const variant& g = cuda_row("linformer");
  expect_all_rows_close(g, approx_problem(2, 2, 2, 37, 37, 16));
  expect_all_rows_close(g, approx_problem(1, 4, 2, 50, 83, 32));   // Nq < Nkv, GQA 2:1
  expect_all_rows_close(g, approx_problem(1, 3, 1, 1, 70, 16));    // the decoder step, GQA 3:1
  expect_all_rows_close(g, approx_problem(2, 2, 1, 83, 50, 8));    // Nq > Nkv
  expect_all_rows_close(g, approx_problem(1, 2, 2, 20, 300, 16));  // Nkv > k = 256
  expect_all_rows_close(g, approx_problem(1, 1, 1, 5, 1, 8));      // one key
  expect_all_rows_close(g, approx_problem(1, 8, 2, 64, 64, 64, "none", 64));
}

// An approximation: its distance to exact softmax attention (information, as the CPU rows
// report it) is far above the tolerance of the check against itself.
TEST(CudaAdditiveLinformer, LinformerDiffersFromExactAttention) {
  ATTN_REQUIRE_GPU();
  const variant& g = cuda_row("linformer");
  const problem p = approx_problem(2, 2, 2, 40, 90, 16);
  const host_inputs in = make_inputs(p, 13);
  const error_report e = check_all_rows(g, in, attention_math::softmax);
  EXPECT_EQ(e.nonfinite, 0);
  EXPECT_GT(e.rel_l2, 1e-2);
}

}  // namespace
}  // namespace attnbench::testing
