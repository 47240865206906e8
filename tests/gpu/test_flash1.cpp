// flash1 (cuda) against the fp64 CPU reference (small shapes, every mask,
// several Br x Bc, fp32/fp16/bf16) and the on-device fp32 reference (large
// shapes). fp16/bf16 within 2x cublas_unfused's error. Host-only checks run
// without a GPU.
#include <gtest/gtest.h>

#include "kernels/models/models.hpp"
#include "tests/gpu/cuda_cases.hpp"

namespace attnbench::testing {
namespace {

const variant& flash1() {
  const variant* v = find_variant("flash1", backend_kind::cuda);
  if (!v) throw std::runtime_error("no cuda row flash1");
  return *v;
}

TEST(CudaFlash1Host, SupportsReasonsAndSharedMemory) {
  problem p = make_problem({1, 2, 2, 64, 64, 256}, dtype::fp32, "none", 256, 256);
  const support s = flash1().supports(p);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("KB shared memory"), std::string::npos) << s.reason;
  EXPECT_NE(s.reason.find("Br=256"), std::string::npos) << s.reason;
  p = make_problem({1, 2, 2, 64, 64, 128}, dtype::bf16, "causal", 64, 64);
  EXPECT_TRUE(flash1().supports(p).ok);
  // Q, K, V tiles (rows padded by 4 bytes), S, two factors per row.
  EXPECT_EQ(flash1_smem_bytes(p), (64 + 128) * (128 * 2 + 4) + 64 * 64 * 4 + 2 * 64 * 4);
}

TEST(CudaFlash1Host, ByteModel) {
  // One KV tile: no state round trip: Q, K, V read once, O and lse written.
  problem p = make_problem({1, 1, 1, 64, 64, 64}, dtype::fp16, "none", 64, 64);
  EXPECT_DOUBLE_EQ(model_bytes_flash1_cuda(p), 2.0 * 64 * 64 * 4 + 4 * 64);
  // Two KV tiles: one write + read of O (fp32), l, m per row.
  p.Bc = 32;
  EXPECT_DOUBLE_EQ(model_bytes_flash1_cuda(p), 2.0 * 64 * 64 * 4 + 4 * 64 + 2.0 * 64 * 4 * 66);
  EXPECT_DOUBLE_EQ(flash1().model(p).flops_executed, model_flops_executed_flash1(p));
}

// Causal with Nq > Nkv: query tile 0 (rows 0..63, aligned positions -96..-33)
// visits no key tile; the kernel writes its O = 0 and lse = -inf without
// reading Q. Tile 1 reads Q, one K/V tile, writes O, lse.
TEST(CudaFlash1Host, ByteModelSkipsQOfTilesWithoutKeys) {
  const problem p = make_problem({1, 1, 1, 128, 32, 64}, dtype::fp16, "causal", 64, 32);
  const double tile = 64.0 * 64 * 2, lse = 4.0 * 64;
  EXPECT_DOUBLE_EQ(model_bytes_flash1_cuda(p), (tile + lse) + (tile + 2.0 * 32 * 64 * 2 + tile + lse));
}

TEST(CudaFlash1, MatchesFp64ReferenceOnSmallShapes) {
  ATTN_REQUIRE_GPU();
  const std::pair<std::int64_t, std::int64_t> tiles[] = {{16, 16}, {32, 64}, {64, 32}};
  for (const shape& s : small_shapes())
    for (const std::string& m : softmax_masks())
      for (dtype t : {dtype::fp32, dtype::fp16, dtype::bf16}) {
        const double tol = bound_for(make_problem(s, t, m));
        for (auto [br, bc] : tiles) {
          const problem p = make_problem(s, t, m, br, bc);
          if (!flash1().supports(p).ok) continue;
          expect_close(flash1(), p, tol);
        }
      }
}

TEST(CudaFlash1, MatchesDeviceReferenceOnLargeShapes) {
  ATTN_REQUIRE_GPU();
  const variant* base = find_variant("cublas_unfused", backend_kind::cuda);
  ASSERT_NE(base, nullptr);
  for (const char* m : {"none", "causal", "local:256,0+global:16"})
    for (dtype t : {dtype::fp32, dtype::bf16}) {
      for (auto [br, bc] : {std::pair<std::int64_t, std::int64_t>{64, 64}, {128, 32}}) {
        const problem p = make_problem({2, 8, 2, 1024, 1536, 128}, t, m, br, bc);
        SCOPED_TRACE(describe(p));
        double tol = fp32_tol;
        if (t != dtype::fp32) tol = low_precision_bound(compare_with_device_reference(*base, p).rel_l2, t);
        const error_report e = compare_with_device_reference(flash1(), p);
        EXPECT_EQ(e.nonfinite, 0);
        EXPECT_LE(e.rel_l2, tol) << "max abs " << e.max_abs;
      }
    }
}

}  // namespace
}  // namespace attnbench::testing
