// The on-device fp32 reference (kernels/cuda/reference) against the fp64 CPU
// reference: softmax with every mask (lse included, rows without a visible
// key give zeros and -inf) and linear attention, fp32/fp16/bf16 inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/reference/attention_reference.hpp"
#include "tests/gpu/cuda_cases.hpp"

namespace attnbench::testing {
namespace {

error_report check_device_reference(attention_math math, const problem& p) {
  const host_inputs in = make_inputs(p, 4321);
  const host_outputs dev = cuda::reference_fp32_on_device(math, in);
  const auto rows = all_rows(p);
  const reference_rows ref = reference_for(math, in, rows);
  const std::span<const double> ref_lse =
      math == attention_math::softmax ? std::span<const double>(ref.lse) : std::span<const double>();
  return compare_rows(p, dev.o, dev.lse, rows, ref.o, ref_lse);
}

TEST(CudaReferenceFp32, SoftmaxMatchesFp64) {
  ATTN_REQUIRE_GPU();
  for (const shape& s : small_shapes())
    for (const std::string& m : softmax_masks())
      for (dtype t : {dtype::fp32, dtype::fp16, dtype::bf16}) {
        const problem p = make_problem(s, t, m);
        SCOPED_TRACE(describe(p));
        const error_report e = check_device_reference(attention_math::softmax, p);
        EXPECT_EQ(e.nonfinite, 0);
        EXPECT_LE(e.rel_l2, fp32_tol);
        EXPECT_LE(e.lse_max_abs, 1e-5);
      }
}

TEST(CudaReferenceFp32, RowsWithoutKeysAreZeroWithMinusInfLse) {
  ATTN_REQUIRE_GPU();
  // causal with Nq > Nkv: the first Nq - Nkv rows see no key.
  const problem p = make_problem({1, 2, 1, 40, 16, 64}, dtype::fp16, "causal");
  const host_outputs dev = cuda::reference_fp32_on_device(attention_math::softmax, make_inputs(p));
  for (std::int64_t z = 0; z < p.B * p.H; ++z)
    for (std::int64_t i = 0; i < p.Nq - p.Nkv; ++i) {
      const std::int64_t row = z * p.Nq + i;
      EXPECT_TRUE(std::isinf(dev.lse[row]) && dev.lse[row] < 0) << row;
      for (std::int64_t x = 0; x < p.d; ++x) ASSERT_EQ(dev.o[row * p.d + x], 0.f) << row;
    }
}

TEST(CudaReferenceFp32, LinearMatchesFp64) {
  ATTN_REQUIRE_GPU();
  for (const shape& s : small_shapes())
    for (const char* m : {"none", "causal"})
      for (dtype t : {dtype::fp32, dtype::bf16}) {
        const problem p = make_problem(s, t, m);
        SCOPED_TRACE(describe(p));
        const error_report e = check_device_reference(attention_math::linear, p);
        EXPECT_EQ(e.nonfinite, 0);
        EXPECT_LE(e.rel_l2, fp32_tol);
      }
}

}  // namespace
}  // namespace attnbench::testing
