// The on-device fp32 reference (kernels/cuda/reference) against the fp64 CPU
// reference: softmax with every mask (lse included, rows without a visible
// key give zeros and -inf) and linear attention, fp32/fp16/bf16 inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/reference/attention_reference.hpp"
#include "tests/gpu/cuda_cases.hpp"

namespace attnbench::testing {
namespace {

// Every path: the cuBLAS GEMMs (the default) in every dtype; the same in pieces of 7 rows (a
// piece splits a head's rows and crosses into the next head of the group) in fp16; the warp
// kernel (where the GEMMs' buffers do not fit) in bf16. (Every path in every dtype tripled the
// test's 25 s under the emulator.)
struct path_dtypes {
  cuda::reference_path path;
  std::vector<dtype> types;
};
const path_dtypes all_paths[] = {
    {cuda::reference_path::gemm_when_it_fits, {dtype::fp32, dtype::fp16, dtype::bf16}},
    {cuda::reference_path::gemm_in_7_row_pieces, {dtype::fp16}},
    {cuda::reference_path::warp_kernel, {dtype::bf16}},
};

error_report check_device_reference(attention_math math, const problem& p,
                                    cuda::reference_path path = cuda::reference_path::gemm_when_it_fits) {
  const host_inputs in = make_inputs(p, 4321);
  const host_outputs dev = cuda::reference_fp32_on_device(math, in, path);
  const auto rows = all_rows(p);
  const reference_rows ref = reference_for(math, in, rows);
  const std::span<const double> ref_lse =
      math == attention_math::softmax ? std::span<const double>(ref.lse) : std::span<const double>();
  return compare_rows(p, dev.o, dev.lse, rows, ref.o, ref_lse);
}

TEST(CudaReferenceFp32, SoftmaxMatchesFp64) {
  ATTN_REQUIRE_GPU();
  for (const auto& [path, types] : all_paths)
    for (const shape& s : small_shapes())
      for (const std::string& m : softmax_masks())
        for (dtype t : types) {
          const problem p = make_problem(s, t, m);
          SCOPED_TRACE(describe(p) + " path " + std::to_string(static_cast<int>(path)));
          const error_report e = check_device_reference(attention_math::softmax, p, path);
          EXPECT_EQ(e.nonfinite, 0);
          EXPECT_LE(e.rel_l2, fp32_tol);
          EXPECT_LE(e.lse_max_abs, 1e-5);
        }
}

// The sparse terms (random blocks, strides) read from device memory, through both kinds of path.
TEST(CudaReferenceFp32, SparseTermMasksMatchFp64) {
  ATTN_REQUIRE_GPU();
  for (const cuda::reference_path path :
       {cuda::reference_path::gemm_in_7_row_pieces, cuda::reference_path::warp_kernel})
    for (const char* m : {"causal+random:16,2", "strided:6,5", "global:2+strided:4,3"})
      for (const shape& s : {shape{1, 4, 2, 70, 45, 32}, shape{1, 2, 2, 37, 53, 64}}) {
        const problem p = make_problem(s, dtype::bf16, m);
        SCOPED_TRACE(describe(p) + " path " + std::to_string(static_cast<int>(path)));
        const error_report e = check_device_reference(attention_math::softmax, p, path);
        EXPECT_EQ(e.nonfinite, 0);
        EXPECT_LE(e.rel_l2, fp32_tol);
        EXPECT_LE(e.lse_max_abs, 1e-5);
      }
}

TEST(CudaReferenceFp32, RowsWithoutKeysAreZeroWithMinusInfLse) {
  ATTN_REQUIRE_GPU();
  // causal with Nq > Nkv: the first Nq - Nkv rows see no key.
  const problem p = make_problem({1, 2, 1, 40, 16, 64}, dtype::fp16, "causal");
  for (const auto& [path, types] : all_paths) {
    const host_outputs dev = cuda::reference_fp32_on_device(attention_math::softmax, make_inputs(p), path);
    for (std::int64_t z = 0; z < p.B * p.H; ++z)
      for (std::int64_t i = 0; i < p.Nq - p.Nkv; ++i) {
        const std::int64_t row = z * p.Nq + i;
        EXPECT_TRUE(std::isinf(dev.lse[row]) && dev.lse[row] < 0) << row;
        for (std::int64_t x = 0; x < p.d; ++x) ASSERT_EQ(dev.o[row * p.d + x], 0.f) << row;
      }
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
