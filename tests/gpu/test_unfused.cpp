// naive, naive_gqa_expand and cublas_unfused (cuda) against the fp64 CPU
// reference (small shapes: ragged, Nq != Nkv, every mask, GQA 1/2/8/all) and
// the on-device fp32 reference (large shapes). fp32 within 1e-5; fp16/bf16
// within 2x cublas_unfused's error on the same problem. Host-only checks
// (rows, supports reasons, byte models) run without a GPU.
#include <gtest/gtest.h>

#include "kernels/models/models.hpp"
#include "tests/gpu/cuda_cases.hpp"

namespace attnbench::testing {
namespace {

const variant& row(const char* name) {
  const variant* v = find_variant(name, backend_kind::cuda);
  if (!v) throw std::runtime_error(std::string("no cuda row ") + name);
  return *v;
}

// ---- host-only ----------------------------------------------------------------
TEST(CudaUnfusedHost, RowsAndSupportReasons) {
  for (const char* n : {"naive", "naive_gqa_expand", "cublas_unfused"}) {
    const variant& v = row(n);
    EXPECT_TRUE(v.writes_lse) << n;
    EXPECT_EQ(v.math, attention_math::softmax) << n;
  }
  const problem mha = make_problem({1, 4, 4, 64, 64, 64}, dtype::fp16, "causal");
  EXPECT_TRUE(row("naive").supports(mha).ok);
  EXPECT_TRUE(row("cublas_unfused").supports(mha).ok);
  const support s = row("naive_gqa_expand").supports(mha);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("H == Hkv"), std::string::npos) << s.reason;
  const problem gqa = make_problem({1, 4, 2, 64, 64, 64}, dtype::fp16, "causal");
  EXPECT_TRUE(row("naive_gqa_expand").supports(gqa).ok);
}

TEST(CudaUnfusedHost, ByteModelsByHand) {
  // One head, Nq = Nkv = d = 64, fp16: every term of docs/models.md (naive, cuda).
  const problem p = make_problem({1, 1, 1, 64, 64, 64}, dtype::fp16, "none");
  const double e = 2, n = 64 * 64;
  // cuBLAS: Q, K once; S written (fp32), read twice; P (fp16) written + read; V once; O; lse.
  EXPECT_DOUBLE_EQ(model_bytes_cublas_unfused(p), e * n * 2 + 4 * n * 3 + e * n * 2 + 4 * 64 + e * n * 2);
  // naive: 32-wide tiles: Q read twice (2 key tiles), K twice, S written, softmax 3 passes,
  // P read twice (2 d-tiles), V twice, O once, lse.
  EXPECT_DOUBLE_EQ(model_bytes_naive_cuda(p),
                   e * n * 2 + e * n * 2 + 4 * n + 4 * n * 3 + 4 * 64 + 4 * n * 2 + e * n * 2 + e * n);
  const problem g = make_problem({1, 4, 1, 64, 64, 64}, dtype::fp16, "none");
  problem x = g;
  x.Hkv = 4;
  EXPECT_DOUBLE_EQ(model_bytes_naive_gqa_expand_cuda(g), 4 * e * 4 * n + model_bytes_naive_cuda(x));
  for (const char* n2 : {"naive", "naive_gqa_expand", "cublas_unfused"}) {
    EXPECT_GT(row(n2).model(g).bytes, model_bytes_min(g)) << n2;
    EXPECT_GE(row(n2).memory_bytes(g), static_cast<std::int64_t>(4 * 4 * n)) << n2;  // S at least
  }
}

// ---- GPU ------------------------------------------------------------------------
TEST(CudaUnfused, MatchesFp64ReferenceOnSmallShapes) {
  ATTN_REQUIRE_GPU();
  for (const shape& s : small_shapes())
    for (const std::string& m : softmax_masks())
      for (dtype t : {dtype::fp32, dtype::fp16, dtype::bf16}) {
        const problem p = make_problem(s, t, m);
        const double tol = bound_for(p);
        if (t != dtype::fp32) {
          SCOPED_TRACE(describe(p));
          EXPECT_LE(tol, t == dtype::fp16 ? 4e-3 : 3e-2);  // the baseline itself is sane
        }
        expect_close(row("cublas_unfused"), p, t == dtype::fp32 ? fp32_tol : tol);
        expect_close(row("naive"), p, tol);
        if (p.H != p.Hkv) expect_close(row("naive_gqa_expand"), p, tol);
      }
}

TEST(CudaUnfused, MatchesDeviceReferenceOnLargeShapes) {
  ATTN_REQUIRE_GPU();
  for (const char* m : {"none", "causal"})
    for (dtype t : {dtype::fp32, dtype::bf16, dtype::fp16}) {
      const problem p = make_problem({2, 8, 2, 1024, 1536, 128}, t, m);
      SCOPED_TRACE(describe(p));
      const error_report base = compare_with_device_reference(row("cublas_unfused"), p);
      EXPECT_EQ(base.nonfinite, 0);
      const double tol = t == dtype::fp32 ? fp32_tol : low_precision_bound(base.rel_l2, t);
      if (t == dtype::fp32) EXPECT_LE(base.rel_l2, fp32_tol);
      for (const char* n : {"naive", "naive_gqa_expand"}) {
        const error_report e = compare_with_device_reference(row(n), p);
        EXPECT_EQ(e.nonfinite, 0) << n;
        EXPECT_LE(e.rel_l2, tol) << n << " max abs " << e.max_abs;
      }
    }
}

TEST(CudaUnfused, RepeatedRunsAreIdentical) {
  ATTN_REQUIRE_GPU();
  // run() twice on the same runner (as the timing loop does) gives the same O.
  const problem p = make_problem({1, 4, 2, 200, 300, 64}, dtype::bf16, "causal");
  for (const char* n : {"naive", "naive_gqa_expand", "cublas_unfused"}) {
    auto r = row(n).make(p);
    r->set_inputs(make_inputs(p));
    r->poison_outputs();
    r->run();
    sync_device();
    const host_outputs a = r->get_outputs();
    r->poison_outputs();
    r->run();
    r->run();
    sync_device();
    const host_outputs b = r->get_outputs();
    EXPECT_EQ(a.o, b.o) << n;
  }
}

}  // namespace
}  // namespace attnbench::testing
