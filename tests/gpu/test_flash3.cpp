// flash3 (cuda, sm_90a): every instantiation (d 64/128/256 x bf16/fp16) against
// the fp64 reference (small shapes, every row) and the on-device fp32
// reference (large shapes), with flash2's checks: error bound, per-row error,
// log-sum-exp, rows with no visible key (O = 0, lse = -inf), ragged tiles,
// Nq != Nkv, local/global masks, packed GQA (G = 3 leaves pad rows).
// flash3_fp8 (e4m3, d 64/128/256): the same checks against the reference on
// the quantized inputs (bound 2^-4), and end to end against the reference on
// the unquantized inputs (bound 2^-3). GPU tests skip with the reason when
// there is no device or it is not sm_90; the host tests (plan, model,
// supports reasons) run everywhere.
#include <gtest/gtest.h>

#include "core/cuda/launch_limits.hpp"
#include "kernels/cuda/flash3/flash3_plan.hpp"
#include "kernels/models/models.hpp"
#include "tests/gpu/cuda_cases.hpp"
#include "tests/gpu/flash2_test_support.hpp"

namespace attnbench::testing {
namespace {

// Skips unless a device is present and flash3 can run on it.
#define ATTN_REQUIRE_FLASH3(p)                                   \
  do {                                                           \
    ATTN_REQUIRE_GPU();                                          \
    const std::string why_ = cuda::flash3_unsupported_reason(p); \
    if (!why_.empty()) GTEST_SKIP() << why_;                     \
  } while (0)

problem f3_problem(std::int64_t B, std::int64_t H, std::int64_t Hkv, std::int64_t Nq, std::int64_t Nkv, std::int64_t d,
                   dtype t, const char* mask) {
  return cuda::flash3_resolve(make_problem(B, H, Hkv, Nq, Nkv, d, t, mask, 128, 128));
}

TEST(Flash3Host, PlanPacksSmallGroups) {
  const cuda::flash3_plan a = cuda::plan_flash3(f3_problem(1, 8, 8, 100, 100, 128, dtype::bf16, "none"));
  EXPECT_EQ(a.pack, 1);
  EXPECT_EQ(a.geometry.Br, 128);
  const cuda::flash3_plan b = cuda::plan_flash3(f3_problem(1, 6, 2, 100, 100, 128, dtype::bf16, "none"));
  EXPECT_EQ(b.pack, 3);
  EXPECT_EQ(b.queries_per_tile, 42);
  EXPECT_EQ(b.geometry.Br, 126);
  EXPECT_EQ(b.geometry.Bc, 128);
  const cuda::flash3_plan c = cuda::plan_flash3(f3_problem(1, 64, 1, 10, 100, 64, dtype::bf16, "none"));
  EXPECT_EQ(c.pack, 1);  // G = 64 > 32: one head per CTA
}

// The model is flash2's walk over flash3's plan; with pack = 1 and a 128-row
// tile it equals the flash2 row's model at Br x Bc = 128 x 128 for the walk
// `visible` (the sparse row).
TEST(Flash3Host, ModelIsTheWalkOfItsPlan) {
  for (const char* m : {"none", "causal", "local:100,0+global:9"}) {
    const problem p = f3_problem(2, 4, 4, 300, 517, 128, dtype::fp16, m);
    const model_figures f3 = cuda::model_flash3_row(p);
    cuda::flash2_plan walk;
    walk.geometry = p;
    walk.pack = 1;
    walk.walk = tile_walk::visible;
    const model_figures f2 = model_flash2_cuda(p, walk);
    EXPECT_DOUBLE_EQ(f3.bytes, f2.bytes) << m;
    EXPECT_DOUBLE_EQ(f3.flops_executed, f2.flops_executed) << m;
    EXPECT_GE(f3.flops_executed, f3.flops) << m;
  }
  // Packing G = 4 heads reads each K/V tile once per group instead of once per head
  // when a group's rows fit one tile (decode-like Nq; for long prompts both read
  // K/V once per 128 rows).
  const problem g = f3_problem(1, 8, 2, 16, 512, 128, dtype::bf16, "none");
  problem one = g;
  one.Hkv = 8;
  EXPECT_LT(cuda::model_flash3_row(g).bytes, cuda::model_flash3_row(one).bytes);
}

TEST(Flash3Host, SupportsReasons) {
  const variant* v = find_variant("flash3", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(v->writes_lse);
  problem p = f3_problem(1, 2, 2, 128, 128, 128, dtype::fp32, "none");
  EXPECT_EQ(v->supports(p).reason, "flash3 (cuda) computes in bf16, fp16, not fp32");
  p.type = dtype::bf16;
  p.d = 96;
  EXPECT_NE(v->supports(p).reason.find("d=96"), std::string::npos);
  p.d = 128;
  const std::string why = cuda::flash3_unsupported_reason(p);
  if (why.empty())
    EXPECT_TRUE(v->supports(p).ok) << v->supports(p).reason;
  else
    EXPECT_EQ(v->supports(p).reason, why);
  const cuda::device_limits& l = cuda::current_device_limits();
  if (l.from_device && !(l.cc_major == 9 && l.cc_minor == 0)) EXPECT_NE(why.find("sm_90"), std::string::npos);
  EXPECT_EQ(v->resolved(p).Br, 128);
  EXPECT_EQ(v->resolved(p).Bc, 128);
  p.d = 256;
  EXPECT_EQ(v->resolved(p).Bc, 64);  // d = 256: 128 x 64 tiles
  p.d = 512;
  EXPECT_NE(v->supports(p).reason.find("d=512"), std::string::npos);
}

// ---- GPU --------------------------------------------------------------------
struct type_case {
  std::int64_t d;
  dtype t;
};
void PrintTo(const type_case& c, std::ostream* os) { *os << "d" << c.d << " " << to_string(c.t); }

class Flash3Instances : public ::testing::TestWithParam<type_case> {};

TEST_P(Flash3Instances, RaggedNoneAndCausal) {
  const type_case c = GetParam();
  ATTN_REQUIRE_FLASH3(f3_problem(1, 1, 1, 1, 1, c.d, c.t, "none"));
  for (const char* m : {"none", "causal"})
    expect_row_accurate("flash3", f3_problem(2, 3, 3, 200, 333, c.d, c.t, m));  // ragged, 3 key tiles
}

TEST_P(Flash3Instances, MasksGqaAndEdgeShapes) {
  const type_case c = GetParam();
  ATTN_REQUIRE_FLASH3(f3_problem(1, 1, 1, 1, 1, c.d, c.t, "none"));
  for (const char* m : {"local:31,7", "local:0,0", "global:5", "causal+global:70", "local:200,0+global:3"})
    expect_row_accurate("flash3", f3_problem(1, 2, 2, 333, 700, c.d, c.t, m));
  for (std::int64_t hkv : {4, 2, 1})  // G = 2, 4, 8 packed
    expect_row_accurate("flash3", f3_problem(2, 8, hkv, 130, 250, c.d, c.t, "causal"));
  expect_row_accurate("flash3", f3_problem(1, 6, 2, 130, 250, c.d, c.t, "local:50,0"));  // G = 3: pad rows
  expect_row_accurate("flash3", f3_problem(1, 2, 2, 300, 77, c.d, c.t, "causal"));       // rows without keys
  expect_row_accurate("flash3", f3_problem(1, 8, 1, 1, 1000, c.d, c.t, "none"));         // Nq = 1, G = 8
  expect_row_accurate("flash3", f3_problem(1, 1, 1, 1, 1, c.d, c.t, "none"));
}

INSTANTIATE_TEST_SUITE_P(AllInstantiations, Flash3Instances,
                         ::testing::Values(type_case{64, dtype::fp16}, type_case{64, dtype::bf16},
                                           type_case{128, dtype::fp16}, type_case{128, dtype::bf16},
                                           type_case{256, dtype::fp16}, type_case{256, dtype::bf16}),
                         [](const auto& info) {
                           return "d" + std::to_string(info.param.d) + "_" + std::string(to_string(info.param.t));
                         });

// Large shapes (many key tiles: every ring phase, full 128-row tiles) against
// the on-device fp32 reference over every row.
TEST(Flash3, LongSequencesMatchDeviceReference) {
  const problem first = f3_problem(1, 1, 1, 1, 1, 128, dtype::bf16, "none");
  ATTN_REQUIRE_FLASH3(first);
  const variant* v = find_variant("flash3", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  for (const char* m : {"none", "causal"})
    for (dtype t : {dtype::bf16, dtype::fp16}) {
      const problem p = f3_problem(1, 4, 2, 4096, 4096, 128, t, m);
      ASSERT_TRUE(v->supports(p).ok) << v->supports(p).reason;
      const error_report e = compare_with_device_reference(*v, p);
      EXPECT_LE(e.rel_l2, fixed_bound(t)) << v->benchmark_name(p) << " first bad row " << e.first_bad_row;
      EXPECT_EQ(e.nonfinite, 0) << v->benchmark_name(p);
      EXPECT_LE(e.lse_max_abs, 1e-2) << v->benchmark_name(p);
    }
}

// ---- flash3_fp8 (e4m3) ---------------------------------------------------------

TEST(Flash3Fp8Host, SupportsReasonsAndTiles) {
  const variant* v = find_variant("flash3_fp8", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(v->writes_lse);
  problem p = f3_problem(1, 2, 2, 128, 128, 128, dtype::bf16, "none");
  EXPECT_EQ(v->supports(p).reason, "flash3_fp8 (cuda) computes in e4m3, not bf16");
  const variant* f16 = find_variant("flash3", backend_kind::cuda);
  ASSERT_NE(f16, nullptr);
  p.type = dtype::e4m3;
  EXPECT_EQ(f16->supports(p).reason, "flash3 (cuda) computes in bf16, fp16, not e4m3");
  const std::string why = cuda::flash3_unsupported_reason(p);
  if (why.empty())
    EXPECT_TRUE(v->supports(p).ok) << v->supports(p).reason;
  else
    EXPECT_EQ(v->supports(p).reason, why);
  EXPECT_EQ(v->resolved(p).Bc, 128);
  p.d = 64;
  EXPECT_EQ(v->resolved(p).Bc, 128);
  p.d = 256;
  EXPECT_EQ(v->resolved(p).Bc, 64);  // d = 256: 128 x 64 tiles, as in 16 bits
  p.d = 96;
  EXPECT_NE(v->supports(p).reason.find("d=96"), std::string::npos);
}

// The e4m3 walk is the bf16 walk (same tiles at d = 128) with 1-byte Q, K, V
// and O still in bf16: the model's bytes drop by exactly half the input
// traffic.
TEST(Flash3Fp8Host, ModelMovesOneByteInputsAndBf16Output) {
  for (const char* m : {"none", "causal", "local:100,0+global:9"}) {
    const problem b = f3_problem(2, 4, 2, 300, 517, 128, dtype::bf16, m);
    problem e = b;
    e.type = dtype::e4m3;
    const model_figures fb = cuda::model_flash3_row(b), fe = cuda::model_flash3_row(e);
    EXPECT_DOUBLE_EQ(fe.flops, fb.flops) << m;
    EXPECT_DOUBLE_EQ(fe.flops_executed, fb.flops_executed) << m;
    const double o_and_lse = static_cast<double>(b.o_elems()) * 2 + static_cast<double>(b.rows()) * 4;
    EXPECT_DOUBLE_EQ(fb.bytes - fe.bytes, (fb.bytes - o_and_lse) / 2) << m;
  }
}

class Flash3Fp8Instances : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(Flash3Fp8Instances, RaggedMasksGqaAndEdgeShapes) {
  const std::int64_t d = GetParam();
  ATTN_REQUIRE_FLASH3(f3_problem(1, 1, 1, 1, 1, d, dtype::e4m3, "none"));
  for (const char* m : {"none", "causal"})
    expect_row_accurate("flash3_fp8", f3_problem(2, 3, 3, 200, 333, d, dtype::e4m3, m));
  for (const char* m : {"local:31,7", "causal+global:70", "local:200,0+global:3"})
    expect_row_accurate("flash3_fp8", f3_problem(1, 2, 2, 333, 700, d, dtype::e4m3, m));
  for (std::int64_t hkv : {4, 1})  // G = 2, 8 packed
    expect_row_accurate("flash3_fp8", f3_problem(2, 8, hkv, 130, 250, d, dtype::e4m3, "causal"));
  expect_row_accurate("flash3_fp8", f3_problem(1, 6, 2, 130, 250, d, dtype::e4m3, "local:50,0"));  // pad rows
  expect_row_accurate("flash3_fp8", f3_problem(1, 2, 2, 300, 77, d, dtype::e4m3, "causal"));       // no keys
  expect_row_accurate("flash3_fp8", f3_problem(1, 8, 1, 1, 1000, d, dtype::e4m3, "none"));         // Nq = 1
}

// The harness's fp8 path end to end: the fp32 originals quantized per tensor
// (make_inputs), the kernel's O against the reference on the originals.
TEST_P(Flash3Fp8Instances, EndToEndAgainstUnquantizedInputs) {
  const std::int64_t d = GetParam();
  const problem p = f3_problem(2, 4, 2, 250, 400, d, dtype::e4m3, "causal");
  ATTN_REQUIRE_FLASH3(p);
  const variant* v = find_variant("flash3_fp8", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  ASSERT_NE(make_inputs(p, 1234).scales.q, 1.f);  // quantized with its own scale
  // make_inputs (what run_and_check gives the row) = the originals quantized per tensor.
  const checked_run c = run_and_check(*v, p);
  const error_report& own = c.err;
  const std::vector<std::int64_t> rows = all_rows(p);
  const host_inputs original = make_original_inputs(p, 1234);
  const error_report e2e = compare_rows(p, c.out.o, {}, rows, reference_softmax(original, rows).o, {});
  EXPECT_EQ(own.nonfinite, 0);
  EXPECT_LE(own.rel_l2, fixed_bound(dtype::e4m3)) << v->benchmark_name(p);
  EXPECT_LE(e2e.rel_l2, fp8_e2e_bound) << v->benchmark_name(p);
  EXPECT_GT(e2e.rel_l2, own.rel_l2 / 4) << "the e2e error includes the inputs' quantization";
}

INSTANTIATE_TEST_SUITE_P(AllInstantiations, Flash3Fp8Instances, ::testing::Values(64, 128, 256),
                         [](const auto& info) { return "d" + std::to_string(info.param) + "_e4m3"; });

TEST(Flash3Fp8, LongSequencesMatchDeviceReference) {
  const problem first = f3_problem(1, 1, 1, 1, 1, 128, dtype::e4m3, "none");
  ATTN_REQUIRE_FLASH3(first);
  const variant* v = find_variant("flash3_fp8", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  for (const char* m : {"none", "causal"}) {
    const problem p = f3_problem(1, 4, 2, 4096, 4096, 128, dtype::e4m3, m);
    ASSERT_TRUE(v->supports(p).ok) << v->supports(p).reason;
    const error_report e = compare_with_device_reference(*v, p);
    EXPECT_LE(e.rel_l2, fixed_bound(dtype::e4m3)) << v->benchmark_name(p) << " first bad row " << e.first_bad_row;
    EXPECT_EQ(e.nonfinite, 0) << v->benchmark_name(p);
    EXPECT_LE(e.lse_max_abs, lse_bound(dtype::e4m3)) << v->benchmark_name(p);
  }
}

}  // namespace
}  // namespace attnbench::testing
