// linear (cuda) against the fp64 CPU reference (small shapes, masks none and
// causal, chunk sizes Bc 16/64, fp32/fp16/bf16, GQA) and the on-device fp32
// reference (large shapes). No softmax baseline exists for linear attention,
// so fp16/bf16 bounds are fixed: about twice the output rounding error.
// Host-only checks run without a GPU.
#include <gtest/gtest.h>

#include "kernels/models/models.hpp"
#include "tests/gpu/cuda_cases.hpp"

namespace attnbench::testing {
namespace {

const variant& linear() {
  const variant* v = find_variant("linear", backend_kind::cuda);
  if (!v) throw std::runtime_error("no cuda row linear");
  return *v;
}

double linear_bound(dtype t) {
  switch (t) {
    case dtype::fp16: return 2e-3;
    case dtype::bf16: return 1.5e-2;
    case dtype::e4m3:  // linear does not claim e4m3
    case dtype::fp32: break;
  }
  return fp32_tol;
}

TEST(CudaLinearHost, SupportsOnlyNoneAndCausal) {
  EXPECT_EQ(linear().math, attention_math::linear);
  EXPECT_FALSE(linear().writes_lse);
  for (const char* m : {"none", "causal"})
    EXPECT_TRUE(linear().supports(make_problem({1, 2, 1, 10, 10, 64}, dtype::fp16, m)).ok) << m;
  for (const char* m : {"local:4,0", "causal+global:2", "global:3"}) {
    const support s = linear().supports(make_problem({1, 2, 1, 10, 10, 64}, dtype::fp16, m));
    EXPECT_FALSE(s.ok) << m;
    EXPECT_NE(s.reason.find("none and causal"), std::string::npos) << s.reason;
  }
}

TEST(CudaLinearHost, Models) {
  // Non-causal: state pass over every key, one state read per row: the
  // recurrent form's FLOPs exactly.
  const problem p = make_problem({2, 4, 2, 100, 300, 64}, dtype::bf16, "none");
  EXPECT_DOUBLE_EQ(linear().model(p).flops_executed, model_flops_linear(p));
  // d = 64, one state-row block of 32... two blocks: K once, V twice.
  const double e = 2, st = 4.0 * 64 * 65;
  const double state_pass = 2 * 2 * (300 * 64 * e * 3 + st);
  const double out_pass = 2 * 4 * (7 * st + 2 * 100 * 64 * e);  // ceil(100/16) = 7 tiles
  EXPECT_DOUBLE_EQ(model_bytes_linear_cuda(p), state_pass + out_pass);
  for (const char* m : {"none", "causal"}) {
    const problem c = make_problem({1, 2, 2, 300, 200, 64}, dtype::fp16, m, 64, 32);
    EXPECT_GT(linear().model(c).bytes, model_bytes_min(c)) << m;
    EXPECT_GT(linear().memory_bytes(c), static_cast<std::int64_t>(model_bytes_min(c))) << m;
  }
}

TEST(CudaLinear, MatchesFp64ReferenceOnSmallShapes) {
  ATTN_REQUIRE_GPU();
  for (const shape& s : small_shapes())
    for (const char* m : {"none", "causal"})
      for (dtype t : {dtype::fp32, dtype::fp16, dtype::bf16})
        for (std::int64_t bc : {16, 64}) expect_close(linear(), make_problem(s, t, m, 64, bc), linear_bound(t));
}

TEST(CudaLinear, MatchesDeviceReferenceOnLargeShapes) {
  ATTN_REQUIRE_GPU();
  for (const char* m : {"none", "causal"})
    for (dtype t : {dtype::fp32, dtype::bf16})
      for (shape s :
           {shape{2, 8, 2, 2048, 2048, 128}, shape{1, 8, 1, 100, 3000, 64}, shape{1, 4, 4, 3000, 1000, 256}}) {
        const problem p = make_problem(s, t, m, 64, 128);
        SCOPED_TRACE(describe(p));
        const error_report e = compare_with_device_reference(linear(), p);
        EXPECT_EQ(e.nonfinite, 0);
        EXPECT_LE(e.rel_l2, linear_bound(t)) << "max abs " << e.max_abs;
      }
}

}  // namespace
}  // namespace attnbench::testing
