// cudnn_sdpa (cuda): cuDNN's fused SDPA through cudnn-frontend. Host-only
// (run without a GPU): attnbench's masks as cuDNN's bottom-right diagonal band
// against core/mask.hpp pair by pair (with off-by-one and top-left controls
// that must mismatch), the refusals with their reasons, the minimal-IO model
// and memory with the workspace. GPU: small shapes (ragged, Nq != Nkv, every
// mask the row claims, every GQA ratio, decode) against the fp64 reference
// with 2x cublas_unfused's error bound and the lse; large ones against the
// on-device fp32 reference. Backward (docs/backward.md): cudnn_sdpa and
// cudnn_sdpa_deterministic claim bwd and fwd_bwd; deviceless validation of the
// backward graph; on a GPU dQ, dK, dV against fp64 within min(2x cublas_unfused's
// gradient error, the sweep's grad_tolerance), no accumulation across runs, the
// deterministic row bit-identical over runs. Every test that needs the row skips with the
// reason when the build found no cuDNN / cudnn-frontend (docs/cudnn.md).
#include <gtest/gtest.h>

#include <string>

#include "core/mask.hpp"
#include "kernels/cuda/common/device_runner.cuh"
#include "kernels/cuda/cudnn/cudnn_band.hpp"
#ifdef ATTNBENCH_WITH_CUDNN
#include "kernels/cuda/cudnn/cudnn_sdpa.hpp"
#endif
#include "kernels/models/models.hpp"
#include "tests/gpu/backward_test_support.hpp"
#include "tests/gpu/cuda_cases.hpp"
#include "tests/gpu/flash2_test_support.hpp"

namespace attnbench::testing {
namespace {

const char* const kNotBuilt =
    "cudnn_sdpa row not built: configure found no cuDNN or no cudnn-frontend headers "
    "(scripts/setup.sh, docs/cudnn.md)";

#define ATTN_REQUIRE_CUDNN_ROW()                                                    \
  do {                                                                              \
    if (!find_variant("cudnn_sdpa", backend_kind::cuda)) GTEST_SKIP() << kNotBuilt; \
  } while (0)

const variant& cudnn_row() { return *find_variant("cudnn_sdpa", backend_kind::cuda); }

problem prob(std::int64_t B, std::int64_t H, std::int64_t Hkv, std::int64_t Nq, std::int64_t Nkv, std::int64_t d,
             dtype t, const char* mask) {
  return attnbench::make_problem(B, H, Hkv, Nq, Nkv, d, t, mask);
}

// Pairs (i, j) where band b and attnbench's visibility disagree.
std::int64_t band_mismatches(const problem& p, const cuda::cudnn_band& b) {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < p.Nq; ++i)
    for (std::int64_t j = 0; j < p.Nkv; ++j) n += cuda::cudnn_band_keeps(p, b, i, j) != is_visible(p, i, j);
  return n;
}

struct band_case {
  std::int64_t nq, nkv;
  const char* mask;
};
// Nq = Nkv, Nq < Nkv (bottom-right shifts the band), decode, windows at the
// edges (L = 0, R = 0), windows wider than the problem, Nq > Nkv unmasked.
const band_case kBandCases[] = {
    {37, 37, "none"},         {37, 37, "causal"},      {20, 53, "causal"},     {1, 100, "causal"},
    {4, 100, "causal"},       {37, 37, "local:5,3"},   {20, 53, "local:0,0"},  {20, 53, "local:7,0"},
    {20, 53, "local:0,9"},    {20, 53, "local:31,7"},  {1, 100, "local:10,0"}, {20, 53, "local:500,500"},
    {20, 53, "local:40,500"}, {20, 53, "local:500,0"}, {70, 45, "none"},       {70, 45, "local:500,500"},
};

TEST(CudnnBandHost, TranslationKeepsExactlyTheVisiblePairs) {
  for (const band_case& c : kBandCases) {
    const problem p = prob(1, 1, 1, c.nq, c.nkv, 64, dtype::bf16, c.mask);
    EXPECT_EQ(band_mismatches(p, cuda::cudnn_band_for(p)), 0) << c.nq << "x" << c.nkv << " " << c.mask;
  }
}

TEST(CudnnBandHost, BoundsAsCudnnDefinesThem) {
  // local:L,R -> left_bound L + 1 (cuDNN keeps j > i' - left), right_bound R.
  cuda::cudnn_band b = cuda::cudnn_band_for(prob(1, 1, 1, 20, 53, 64, dtype::bf16, "local:31,7"));
  ASSERT_TRUE(b.left && b.right);
  EXPECT_EQ(*b.left, 32);
  EXPECT_EQ(*b.right, 7);
  EXPECT_TRUE(b.bottom_right);  // Nq != Nkv
  b = cuda::cudnn_band_for(prob(1, 1, 1, 37, 37, 64, dtype::bf16, "causal"));
  EXPECT_FALSE(b.left);
  ASSERT_TRUE(b.right);
  EXPECT_EQ(*b.right, 0);
  EXPECT_FALSE(b.bottom_right);  // Nq = Nkv: cuDNN's plain (top-left) causal, the same pairs
  // Bounds that remove nothing stay unset: decode under bottom-right causal
  // sees every key, and a window wider than the problem is no mask.
  b = cuda::cudnn_band_for(prob(1, 1, 1, 1, 100, 64, dtype::bf16, "causal"));
  EXPECT_FALSE(b.left || b.right);
  b = cuda::cudnn_band_for(prob(1, 1, 1, 20, 53, 64, dtype::bf16, "local:500,500"));
  EXPECT_FALSE(b.left || b.right);
}

// Negative controls: the translation test catches a left bound off by one and
// a top-left (unshifted) alignment.
TEST(CudnnBandHost, NegativeControlsMismatch) {
  for (const band_case& c : kBandCases) {
    const problem p = prob(1, 1, 1, c.nq, c.nkv, 64, dtype::bf16, c.mask);
    const cuda::cudnn_band b = cuda::cudnn_band_for(p);
    if (b.left) {
      cuda::cudnn_band off_by_one = b;
      off_by_one.left = *b.left - 1;  // cuDNN's left bound taken as attnbench's L
      EXPECT_GT(band_mismatches(p, off_by_one), 0) << c.nq << "x" << c.nkv << " " << c.mask;
    }
    if ((b.left || b.right) && p.Nq != p.Nkv) {
      ASSERT_TRUE(b.bottom_right);
      cuda::cudnn_band top_left = b;  // the band applied as if query 0 sat at key 0
      top_left.bottom_right = false;
      EXPECT_GT(band_mismatches(p, top_left), 0) << c.nq << "x" << c.nkv << " " << c.mask;
    }
  }
}

TEST(CudnnSdpaHost, RowDeclaration) {
  ATTN_REQUIRE_CUDNN_ROW();
  const variant& v = cudnn_row();
  EXPECT_TRUE(v.writes_lse);
  EXPECT_TRUE(v.has(tag::library));
  EXPECT_TRUE(v.has(tag::fused));
  EXPECT_FALSE(v.has(tag::tiled));
  EXPECT_EQ(v.caps.masks & mask_global, 0u);
}

TEST(CudnnSdpaHost, SupportsReasons) {
  ATTN_REQUIRE_CUDNN_ROW();
  const variant& v = cudnn_row();
  problem p = prob(1, 2, 2, 128, 128, 64, dtype::fp32, "none");
  EXPECT_EQ(v.supports(p).reason, "cudnn_sdpa (cuda) computes in fp16, bf16, not fp32");
  p = prob(1, 2, 2, 128, 128, 64, dtype::bf16, "causal+global:4");
  EXPECT_NE(v.supports(p).reason.find("global"), std::string::npos) << v.supports(p).reason;
  p = prob(1, 2, 2, 128, 128, 64, dtype::bf16, "causal+strided:16,8");
  EXPECT_NE(v.supports(p).reason.find("strided"), std::string::npos) << v.supports(p).reason;
  // Past the capabilities: the row's own rules.
  p.d = 100;  // validate() refuses it first; the row's own rule still names it
  p.mask = {};
  EXPECT_NE(v.supports(p).reason.find("d=100"), std::string::npos) << v.supports(p).reason;
  p = prob(1, 2, 2, 300, 77, 64, dtype::bf16, "causal");
  EXPECT_NE(v.supports(p).reason.find("Nq=300 > Nkv=77"), std::string::npos) << v.supports(p).reason;
  p = prob(1, 2, 2, 300, 77, 64, dtype::bf16, "local:10,0");
  EXPECT_FALSE(v.supports(p).ok);
  if (no_device_reason().empty()) return;  // with a device cuDNN's own verdict decides the rest
  for (const char* m : {"none", "causal", "local:31,7"})
    EXPECT_TRUE(v.supports(prob(1, 8, 2, 100, 777, 128, dtype::fp16, m)).ok) << m;
  EXPECT_TRUE(v.supports(prob(1, 2, 2, 300, 77, 64, dtype::bf16, "none")).ok);
}

TEST(CudnnSdpaHost, MinimalIoModelAndMemoryWithWorkspace) {
  const problem p = prob(2, 8, 2, 100, 333, 64, dtype::bf16, "causal");
  const double lse = 4.0 * p.rows();
  EXPECT_DOUBLE_EQ(model_bytes_cudnn_sdpa_min_io(p), model_bytes_min(p) + lse);
  EXPECT_EQ(memory_bytes_cudnn_sdpa(p, 0), cuda::device_runner::base_memory_bytes(p));
  EXPECT_EQ(memory_bytes_cudnn_sdpa(p, 12345), cuda::device_runner::base_memory_bytes(p) + 12345);
  if (!find_variant("cudnn_sdpa", backend_kind::cuda)) return;
  const variant& v = cudnn_row();
  const model_figures m = v.model(p);
  EXPECT_DOUBLE_EQ(m.bytes, model_bytes_cudnn_sdpa_min_io(p));
  EXPECT_DOUBLE_EQ(m.flops, model_flops_softmax(p));
  // Without a device the workspace is unknown (0); with one, whatever cuDNN's
  // plan asks.
  if (no_device_reason().empty())
    EXPECT_GE(v.memory_bytes(p), cuda::device_runner::base_memory_bytes(p));
  else
    EXPECT_EQ(v.memory_bytes(p), cuda::device_runner::base_memory_bytes(p));
}

// cudnn-frontend validates the row's graph without a device (its support rules
// for this cuDNN version, on an sm_90 part with 132 SMs, the H200): every case the GPU tests below run
// passes, and what the row refuses statically cuDNN refuses too.
TEST(CudnnSdpaHost, FrontendValidatesTheGraphsWithoutDevice) {
#ifndef ATTNBENCH_WITH_CUDNN
  GTEST_SKIP() << kNotBuilt;
#else
  const problem claimed[] = {
      prob(2, 3, 3, 200, 333, 64, dtype::bf16, "none"),
      prob(1, 2, 2, 100, 777, 128, dtype::fp16, "causal"),
      prob(1, 2, 2, 300, 77, 64, dtype::bf16, "none"),
      prob(1, 2, 2, 333, 333, 64, dtype::bf16, "local:31,7"),
      prob(1, 2, 2, 120, 333, 128, dtype::fp16, "local:0,0"),
      prob(1, 2, 2, 120, 333, 128, dtype::fp16, "local:0,40"),
      prob(2, 8, 1, 130, 250, 128, dtype::bf16, "causal"),
      prob(1, 6, 2, 130, 250, 64, dtype::fp16, "none"),
      prob(2, 8, 1, 1, 4096, 128, dtype::bf16, "causal"),
      prob(2, 8, 1, 4, 4096, 128, dtype::bf16, "local:255,0"),
      prob(1, 8, 8, 4, 1000, 64, dtype::fp16, "causal"),
      prob(2, 8, 2, 1024, 1536, 128, dtype::bf16, "local:255,0"),
  };
  for (const problem& p : claimed) EXPECT_EQ(cuda::cudnn_sdpa_validate_deviceless(p, 90, 132), "") << describe(p);
  // The static refusal (Nq > Nkv under a band) is cuDNN's rule, not ours.
  for (const char* m : {"causal", "local:10,0"}) {
    const problem p = prob(1, 2, 2, 300, 77, 64, dtype::bf16, m);
    EXPECT_NE(cuda::cudnn_sdpa_validate_deviceless(p, 90, 132), "") << describe(p);
  }
#endif
}

// ---- GPU --------------------------------------------------------------------

#define ATTN_REQUIRE_CUDNN_GPU() \
  do {                           \
    ATTN_REQUIRE_GPU();          \
    ATTN_REQUIRE_CUDNN_ROW();    \
  } while (0)

TEST(CudnnSdpa, RaggedLengthsBothDtypes) {
  ATTN_REQUIRE_CUDNN_GPU();
  for (dtype t : {dtype::bf16, dtype::fp16})
    for (const char* m : {"none", "causal"}) {
      expect_row_accurate("cudnn_sdpa", prob(2, 3, 3, 200, 333, 64, t, m));
      expect_row_accurate("cudnn_sdpa", prob(1, 2, 2, 100, 777, 128, t,
                                             m));  // Nq < Nkv: bottom-right
    }
  expect_row_accurate("cudnn_sdpa", prob(1, 2, 2, 300, 77, 64, dtype::bf16,
                                         "none"));  // Nq > Nkv
}

TEST(CudnnSdpa, LocalWindows) {
  ATTN_REQUIRE_CUDNN_GPU();
  for (const char* m : {"local:31,7", "local:0,0", "local:100,0", "local:0,40", "local:500,500"}) {
    expect_row_accurate("cudnn_sdpa", prob(1, 2, 2, 333, 333, 64, dtype::bf16, m));
    expect_row_accurate("cudnn_sdpa", prob(1, 2, 2, 120, 333, 128, dtype::fp16, m));
  }
}

TEST(CudnnSdpa, EveryGqaRatio) {
  ATTN_REQUIRE_CUDNN_GPU();
  for (std::int64_t hkv : {8, 4, 2, 1})
    expect_row_accurate("cudnn_sdpa", prob(2, 8, hkv, 130, 250, 128, dtype::bf16, "causal"));
  expect_row_accurate("cudnn_sdpa", prob(1, 6, 2, 130, 250, 64, dtype::fp16, "none"));  // G = 3
}

TEST(CudnnSdpa, Decode) {
  ATTN_REQUIRE_CUDNN_GPU();
  for (std::int64_t nq : {1, 4})
    for (const char* m : {"causal", "none", "local:255,0"}) {
      expect_row_accurate("cudnn_sdpa", prob(2, 8, 1, nq, 4096, 128, dtype::bf16, m));
      expect_row_accurate("cudnn_sdpa", prob(1, 8, 8, nq, 1000, 64, dtype::fp16, m));
    }
}

TEST(CudnnSdpa, RepeatedRunsAndSharedGraphAreIdentical) {
  ATTN_REQUIRE_CUDNN_GPU();
  // The graph is cached per problem: two runners share it; run() twice (as the
  // timing loop does).
  const problem p = prob(1, 4, 2, 200, 300, 64, dtype::bf16, "causal");
  const host_inputs in = make_inputs(p, 7);
  auto a = cudnn_row().make(p);
  auto b = cudnn_row().make(p);
  a->set_inputs(in);
  b->set_inputs(in);
  a->run();
  a->run();
  b->poison_outputs();
  b->run();
  sync_device();
  const host_outputs oa = a->get_outputs(), ob = b->get_outputs();
  EXPECT_EQ(oa.o, ob.o);
  EXPECT_EQ(oa.lse, ob.lse);
}

TEST(CudnnSdpa, LargeShapesAgainstDeviceReference) {
  ATTN_REQUIRE_CUDNN_GPU();
  for (const char* m : {"none", "causal", "local:255,0"})
    for (dtype t : {dtype::bf16, dtype::fp16}) {
      const problem p = prob(2, 8, 2, 1024, 1536, 128, t, m);
      SCOPED_TRACE(describe(p));
      const error_report base = compare_with_device_reference(*find_variant("cublas_unfused", backend_kind::cuda), p);
      const double tol = low_precision_bound(base.rel_l2, t);
      const error_report e = compare_with_device_reference(cudnn_row(), p);
      EXPECT_EQ(e.nonfinite, 0);
      EXPECT_LE(e.rel_l2, tol) << "max abs " << e.max_abs;
      EXPECT_LE(e.lse_max_abs, kLseBound);
    }
}

// ---- backward -------------------------------------------------------------------

const variant* cudnn_deterministic_row() { return find_variant("cudnn_sdpa_deterministic", backend_kind::cuda); }

TEST(CudnnSdpaBwdHost, RowsClaimTheBackward) {
  ATTN_REQUIRE_CUDNN_ROW();
  EXPECT_EQ(cudnn_row().caps.passes, static_cast<unsigned>(pass_all));
  const variant* det = cudnn_deterministic_row();
  ASSERT_NE(det, nullptr);
  EXPECT_EQ(det->caps.passes, static_cast<unsigned>(pass_bwd | pass_fwd_bwd));
  const problem f = prob(1, 8, 2, 256, 256, 128, dtype::bf16, "causal");
  const support s = det->supports(f);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("not fwd"), std::string::npos) << s.reason;
  // Without a device the static rules; with one, cuDNN's verdict on both graphs (hd 128 bf16: claimed).
  EXPECT_TRUE(cudnn_row().supports(with_pass(f, pass_kind::bwd)).ok) << cudnn_row().supports(f).reason;
  EXPECT_TRUE(det->supports(with_pass(f, pass_kind::fwd_bwd)).ok);
}

TEST(CudnnSdpaBwdHost, MinimalIoModelByHand) {
  // B 1, H 4, Hkv 2, Nq 64, Nkv 96, d 32, fp16: Q, O, dO, dQ of 4 heads, K, V, dK, dV of 2, lse.
  const problem p = with_pass(prob(1, 4, 2, 64, 96, 32, dtype::fp16, "none"), pass_kind::bwd);
  const double q = 4 * 64 * 32, kv = 2 * 96 * 32;
  const model_figures m = model_cudnn_sdpa_backward_min_io(p);
  EXPECT_DOUBLE_EQ(m.bytes, 2 * (4 * q + 4 * kv) + 4.0 * 4 * 64);
  EXPECT_DOUBLE_EQ(m.flops, 2.5 * model_flops_softmax(with_pass(p, pass_kind::fwd)));
  if (!find_variant("cudnn_sdpa", backend_kind::cuda)) return;
  const model_figures fb = cudnn_row().model(with_pass(p, pass_kind::fwd_bwd));
  EXPECT_DOUBLE_EQ(fb.bytes, model_bytes_cudnn_sdpa_min_io(with_pass(p, pass_kind::fwd)) + m.bytes);
  // Admission adds dO, dQ, dK, dV to the forward's memory.
  EXPECT_GE(cudnn_row().memory_bytes(p),
            cudnn_row().memory_bytes(with_pass(p, pass_kind::fwd)) + static_cast<std::int64_t>(2 * (2 * q + 2 * kv)));
}

TEST(CudnnSdpaBwdHost, FrontendValidatesTheBackwardGraphsWithoutDevice) {
#ifndef ATTNBENCH_WITH_CUDNN
  GTEST_SKIP() << kNotBuilt;
#else
  for (const problem& p :
       {prob(2, 3, 3, 200, 333, 64, dtype::bf16, "none"), prob(1, 2, 2, 100, 777, 128, dtype::fp16, "causal"),
        prob(2, 8, 1, 130, 250, 128, dtype::bf16, "causal"), prob(1, 2, 2, 333, 333, 64, dtype::bf16, "local:31,7")})
    EXPECT_EQ(cuda::cudnn_sdpa_validate_deviceless(with_pass(p, pass_kind::bwd), 90, 132), "") << describe(p);
  // Control: the backward graph is what is validated. cuDNN's backward on sm_80 (A100, 108 SMs)
  // takes head dims up to 128, its forward 256: d 256 passes as fwd and fails as bwd.
  const problem d256 = prob(1, 2, 2, 128, 128, 256, dtype::bf16, "causal");
  EXPECT_EQ(cuda::cudnn_sdpa_validate_deviceless(d256, 80, 108), "");
  EXPECT_NE(cuda::cudnn_sdpa_validate_deviceless(with_pass(d256, pass_kind::bwd), 80, 108).find("hidden_dim"),
            std::string::npos);
#endif
}

// On a device: gradients within min(2x cublas_unfused's gradient error, grad_tolerance).
void expect_gradients_accurate(const variant& v, const problem& p) {
  SCOPED_TRACE(v.name + " " + describe(p));
  const double base = baseline_grad_error(p);
  ASSERT_LE(base, grad_tolerance(p.type)) << "cublas_unfused's own gradient error";
  const double tol = std::min(grad_tolerance(p.type), 2 * base + 1e-4);
  const grad_run g = run_backward(v, p);
  EXPECT_LE(g.dq, tol);
  EXPECT_LE(g.dk, tol);
  EXPECT_LE(g.dv, tol);
}

TEST(CudnnSdpaBwd, GradientsMatchFp64Reference) {
  ATTN_REQUIRE_CUDNN_GPU();
  const variant* det = cudnn_deterministic_row();
  ASSERT_NE(det, nullptr);
  for (pass_kind k : {pass_kind::bwd, pass_kind::fwd_bwd})
    for (dtype t : {dtype::bf16, dtype::fp16})
      for (const char* m : {"none", "causal", "local:31,7"}) {
        expect_gradients_accurate(cudnn_row(), with_pass(prob(2, 3, 3, 200, 333, 64, t, m), k));
        expect_gradients_accurate(cudnn_row(), with_pass(prob(2, 8, 2, 130, 250, 128, t, m), k));  // GQA 4
        expect_gradients_accurate(*det, with_pass(prob(1, 8, 1, 100, 257, 128, t, m), k));         // GQA 8
      }
}

TEST(CudnnSdpaBwd, RepeatedRunsDoNotAccumulateAndDeterministicIsBitIdentical) {
  ATTN_REQUIRE_CUDNN_GPU();
  const problem p = with_pass(prob(1, 8, 2, 512, 512, 128, dtype::bf16, "causal"), pass_kind::bwd);
  host_inputs in = make_inputs(p, 5);
  in.d_o = make_grad_output(p, 6);
  for (const variant* v : {&cudnn_row(), cudnn_deterministic_row()}) {
    ASSERT_NE(v, nullptr);
    auto r = v->make(p);
    r->set_inputs(in);
    r->poison_outputs();
    r->run();
    sync_device();
    const host_outputs a = r->get_outputs();
    for (int i = 0; i < 3; ++i) r->run();
    sync_device();
    const host_outputs b = r->get_outputs();
    // The atomic row's dQ may differ in the last bits between runs; never by a second copy.
    double num = 0, den = 0;
    for (std::size_t x = 0; x < a.dq.size(); ++x) {
      num += (a.dq[x] - b.dq[x]) * (a.dq[x] - b.dq[x]);
      den += a.dq[x] * a.dq[x];
    }
    EXPECT_LE(std::sqrt(num / den), 1e-2) << v->name;
    if (v == cudnn_deterministic_row()) {
      EXPECT_EQ(a.dq, b.dq);
      EXPECT_EQ(a.dk, b.dk);
      EXPECT_EQ(a.dv, b.dv);
    }
  }
}

}  // namespace
}  // namespace attnbench::testing
