// flash2 (cuda): every tile instantiation, d 64/128, fp16 and bf16, against
// the fp64 reference with an error bound of 2x cublas_unfused's; Nq != Nkv,
// ragged lengths, fully masked rows, local/global masks (flash2 masks them
// element-wise), every GQA ratio, log-sum-exp. Host-only checks (tile
// helpers, models, supports reasons) run without a GPU too.
#include <gtest/gtest.h>

#include "kernels/models/models.hpp"
#include "kernels/cuda/flash2/flash2_plan.hpp"
#include "kernels/cuda/flash2/flash2_params.hpp"
#include "kernels/cuda/common/device_runner.cuh"
#include "core/tiles.hpp"
#include "tests/gpu/flash2_test_support.hpp"

namespace attnbench::testing {
namespace {

TEST(Flash2Host, KernelTileWalkMatchesCpuByteModel) {
  for (const char* m : {"none", "causal", "local:50,0+global:9"})
    for (std::int64_t hkv : {4, 1}) {
      const problem p = f2_problem(2, 4, hkv, 300, 517, 128, dtype::fp16, m, 128, 64);
      EXPECT_DOUBLE_EQ(cuda::model_flash2_row(cuda::flash2_row::flash2, p).bytes, model_bytes_flash2(p)) << m;
    }
}

// A row tile that visits no key tile (causal, Nq > Nkv: the first rows see
// no key) skips its Q read in the kernel; the rows report the walk's bytes,
// the CPU models model_bytes_flash2 / model_bytes_sparse (kernels/models/flash2.cpp) still count that Q.
TEST(Flash2Host, RowTilesWithoutKeyTilesSkipQ) {
  const problem p = f2_problem(1, 2, 2, 400, 20, 64, dtype::fp16, "causal", 128, 64);
  double skipped = 0;
  for (std::int64_t r0 = 0; r0 < p.Nq; r0 += p.Br) {
    const std::int64_t r1 = std::min(p.Nq, r0 + p.Br);
    if (kv_tiles_for_queries(p, r0, r1, tile_walk::causal_bound).count() == 0) skipped += (r1 - r0) * p.d * 2.0;
  }
  skipped *= static_cast<double>(p.B * p.H);
  EXPECT_GT(skipped, 0);
  EXPECT_DOUBLE_EQ(cuda::model_flash2_row(cuda::flash2_row::flash2, p).bytes, model_bytes_flash2(p) - skipped);
  const variant* f = find_variant("flash2", backend_kind::cuda);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->model(p).bytes, cuda::model_flash2_row(cuda::flash2_row::flash2, p).bytes);

  const problem ps = f2_problem(1, 2, 2, 400, 20, 64, dtype::fp16, "causal+global:4", 128, 64);
  const variant* s = find_variant("sparse", backend_kind::cuda);
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(s->model(ps).bytes, cuda::model_flash2_row(cuda::flash2_row::sparse, ps).bytes);
  EXPECT_DOUBLE_EQ(s->model(ps).flops_executed, cuda::model_flash2_row(cuda::flash2_row::sparse, ps).flops_executed);
  EXPECT_LE(s->model(ps).bytes, model_bytes_sparse(ps));
}

TEST(Flash2Host, SupportsReasons) {
  const variant* v = find_variant("flash2", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  problem p = f2_problem(1, 2, 2, 128, 128, 128, dtype::fp32, "none");
  EXPECT_EQ(v->supports(p).reason, "flash2 (cuda) computes in bf16, fp16, not fp32");
  p.type = dtype::bf16;
  p.d = 96;
  EXPECT_NE(v->supports(p).reason.find("d=96"), std::string::npos);
  p.d = 64;
  p.Br = 32;
  p.Bc = 128;
  EXPECT_NE(v->supports(p).reason.find("32x128"), std::string::npos) << v->supports(p).reason;
  EXPECT_TRUE(v->writes_lse);
  p.Br = 128;
  EXPECT_TRUE(v->supports(p).ok) << v->supports(p).reason;
}

TEST(Flash2Host, ExecutedFlopsCoverUsefulFlops) {
  const variant* v = find_variant("flash2", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  for (const char* m : {"none", "causal", "local:64,0"}) {
    const problem p = f2_problem(1, 2, 2, 1000, 1000, 64, dtype::bf16, m);
    EXPECT_GE(v->model(p).flops_executed, v->model(p).flops) << m;
    EXPECT_GT(v->model(p).bytes, 0) << m;
    EXPECT_GE(static_cast<double>(v->memory_bytes(p)), model_bytes_min(p)) << m;
  }
}

TEST(Flash2Host, MemoryCountsTheDeviceMaskData) {
  // The sparse row's runner copies the key-tile lists (int32 counts and indices per query
  // tile) and the sparse terms to the device: memory_bytes counts them; a mask without
  // sparse terms adds nothing.
  const variant* v = find_variant("sparse", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  const problem dense = f2_problem(1, 2, 2, 1000, 3000, 64, dtype::bf16, "local:64,0");
  const problem sparse = f2_problem(1, 2, 2, 1000, 3000, 64, dtype::bf16, "local:64,0+random:64,2");
  ASSERT_TRUE(v->supports(sparse).ok) << v->supports(sparse).reason;
  const std::int64_t lists = 4 * ceil_div(sparse.Nq, sparse.Br) * (1 + ceil_div(sparse.Nkv, sparse.Bc));
  EXPECT_EQ(v->memory_bytes(dense), cuda::device_runner::base_memory_bytes(dense));
  EXPECT_GE(v->memory_bytes(sparse), cuda::device_runner::base_memory_bytes(sparse) + lists);
}

// ---- GPU --------------------------------------------------------------------
struct tile_case {
  std::int64_t d, br, bc;
  dtype t;
};
// Readable (and padding-free) parameter text in test names and ctest listings.
void PrintTo(const tile_case& c, std::ostream* os) {
  *os << "d" << c.d << " " << to_string(c.t) << " " << c.br << "x" << c.bc;
}

class Flash2Tiles : public ::testing::TestWithParam<tile_case> {};

TEST_P(Flash2Tiles, NonCausalAndCausalRagged) {
  ATTN_REQUIRE_GPU();
  const tile_case c = GetParam();
  for (const char* m : {"none", "causal"}) {
    // 333 keys: 5 full 64-key tiles + 13; 200 rows: not a multiple of 64/128.
    expect_row_accurate("flash2", f2_problem(2, 3, 3, 200, 333, c.d, c.t, m, c.br, c.bc));
  }
}

INSTANTIATE_TEST_SUITE_P(AllInstantiations, Flash2Tiles,
                         ::testing::Values(tile_case{64, 64, 64, dtype::fp16}, tile_case{64, 64, 64, dtype::bf16},
                                           tile_case{64, 128, 64, dtype::fp16}, tile_case{64, 128, 64, dtype::bf16},
                                           tile_case{64, 128, 128, dtype::fp16}, tile_case{64, 128, 128, dtype::bf16},
                                           tile_case{128, 64, 64, dtype::fp16}, tile_case{128, 64, 64, dtype::bf16},
                                           tile_case{128, 128, 64, dtype::fp16}, tile_case{128, 128, 64, dtype::bf16},
                                           tile_case{128, 128, 128, dtype::fp16}, tile_case{128, 128, 128, dtype::bf16},
                                           tile_case{128, 128, 32, dtype::fp16}, tile_case{128, 128, 32, dtype::bf16}),
                         [](const auto& info) {
                           const tile_case& c = info.param;
                           return "d" + std::to_string(c.d) + "_" + std::string(to_string(c.t)) + "_" +
                                  std::to_string(c.br) + "x" + std::to_string(c.bc);
                         });

TEST(Flash2, QueriesFewerThanKeys) {
  ATTN_REQUIRE_GPU();
  for (dtype t : {dtype::bf16, dtype::fp16}) {
    expect_row_accurate("flash2", f2_problem(1, 2, 2, 100, 777, 128, t, "causal"));
    expect_row_accurate("flash2", f2_problem(1, 2, 2, 1, 1000, 64, t, "none", 64, 64));
  }
}

TEST(Flash2, FullyMaskedRowsGiveZerosAndMinusInfLse) {
  ATTN_REQUIRE_GPU();
  // Causal with Nq > Nkv: rows i < Nq - Nkv see no key (bottom-right alignment).
  const problem p = f2_problem(1, 2, 2, 300, 77, 128, dtype::bf16, "causal");
  ASSERT_GT(fully_masked_rows(p), 0);
  expect_row_accurate("flash2", p);
  // A whole query tile without keys, and a local window in front of the keys.
  expect_row_accurate("flash2", f2_problem(1, 1, 1, 400, 20, 64, dtype::fp16, "causal", 64, 64));
  expect_row_accurate("flash2", f2_problem(1, 1, 1, 300, 100, 64, dtype::fp16, "local:10,0", 64, 64));
}

TEST(Flash2, LocalAndGlobalMasksMaskedElementWise) {
  ATTN_REQUIRE_GPU();
  for (const char* m : {"local:31,7", "local:0,0", "global:5", "causal+global:70", "local:100,0+global:3"})
    expect_row_accurate("flash2", f2_problem(1, 2, 2, 333, 333, 64, dtype::bf16, m, 64, 64));
}

TEST(Flash2, EveryGqaRatio) {
  ATTN_REQUIRE_GPU();
  for (std::int64_t hkv : {8, 4, 2, 1})
    expect_row_accurate("flash2", f2_problem(2, 8, hkv, 130, 250, 128, dtype::bf16, "causal"));
  expect_row_accurate("flash2", f2_problem(1, 6, 2, 130, 250, 64, dtype::fp16, "none"));  // G = 3
}

TEST(Flash2, LongerSequence) {
  ATTN_REQUIRE_GPU();
  expect_row_accurate("flash2", f2_problem(1, 4, 4, 2048, 2048, 128, dtype::bf16, "causal"), 256);
  expect_row_accurate("flash2", f2_problem(1, 4, 4, 2048, 2048, 64, dtype::fp16, "none", 128, 128), 256);
}

}  // namespace
}  // namespace attnbench::testing
