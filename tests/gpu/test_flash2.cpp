// flash2 (cuda): every tile instantiation, d 64/128, fp16 and bf16, against
// the fp64 reference with an error bound of 2x cublas_unfused's; Nq != Nkv,
// ragged lengths, fully masked rows, local/global masks (flash2 masks them
// element-wise), every GQA ratio, log-sum-exp. Host-only checks (tile
// helpers, models, supports reasons) run without a GPU too.
#include <gtest/gtest.h>

#include "harness/models.hpp"
#include "kernels/cuda/flash2/flash2_api.hpp"
#include "kernels/cuda/flash2/flash2_params.hpp"
#include "kernels/cuda/flash2/flash2_test_support.hpp"

namespace attnbench::testing {
namespace {

// ---- host-only: the kernel's tile walk agrees with harness/mask.hpp ----------
TEST(Flash2Host, KvTilesForQueriesMatchesMaskHelpers) {
  const char* masks[] = {"none", "causal", "local:0,0", "local:37,5", "local:200,300",
                         "causal+global:3", "local:10,0+global:70", "global:130"};
  for (const char* m : masks)
    for (auto [nq, nkv] : {std::pair{1, 1}, {100, 333}, {333, 100}, {256, 256}, {77, 1000}})
      for (std::int64_t br : {16, 64, 128})
        for (std::int64_t bc : {64, 128}) {
          problem p = f2_problem(1, 1, 1, nq, nkv, 64, dtype::bf16, m, br, bc);
          for (std::int64_t qt = 0; qt < num_q_tiles(p); ++qt) {
            const std::int64_t q0 = qt * br, q1 = std::min(p.Nq, q0 + br);
            const tile_spans vis = visible_kv_tiles(p, qt);
            const tile_spans mine = cuda::kv_tiles_for_queries(p, q0, q1, true);
            EXPECT_TRUE(vis.first.lo == mine.first.lo && vis.first.hi == mine.first.hi &&
                        vis.second.lo == mine.second.lo && vis.second.hi == mine.second.hi)
                << m << " Nq " << nq << " Nkv " << nkv << " qt " << qt;
            const span64 cb = causal_bounded_kv_tiles(p, qt);
            const tile_spans bounded = cuda::kv_tiles_for_queries(p, q0, q1, false);
            EXPECT_TRUE(cb.lo == bounded.first.lo && cb.hi == bounded.first.hi && bounded.second.empty())
                << m << " Nq " << nq << " Nkv " << nkv << " qt " << qt;
          }
        }
}

// The kernel's mask shortcuts against is_visible, pair by pair: the per-row
// rule, the "tile needs no mask" test, and that the visited tiles of any
// (also packed, unaligned) query range hold every visible pair of it.
TEST(Flash2Host, KernelVisibilityRulesMatchIsVisible) {
  const char* masks[] = {"none", "causal", "local:0,0", "local:37,5", "local:3,90",
                         "causal+global:3", "local:10,0+global:70", "global:130"};
  for (const char* m : masks)
    for (auto [nq, nkv] : {std::pair{1, 1}, {100, 333}, {333, 100}, {200, 200}})
      for (std::int64_t bc : {64, 128}) {
        const problem p = f2_problem(1, 1, 1, nq, nkv, 64, dtype::bf16, m, 64, bc);
        const std::int64_t gk = std::min(p.mask.global, p.Nkv);
        for (std::int64_t i = 0; i < p.Nq; ++i) {
          const span64 w = cuda::row_window(p, i);
          for (std::int64_t j = 0; j < p.Nkv; ++j)
            ASSERT_EQ(j < gk || w.contains(j), is_visible(p, i, j)) << m << " i " << i << " j " << j;
        }
        for (int pack : {1, 3, 8})
          for (std::int64_t bm : {16, 64}) {
            const std::int64_t rows = p.Nq * pack;
            for (std::int64_t r0 = 0; r0 < rows; r0 += bm) {
              const span64 q = cuda::packed_query_range(r0, std::min(rows, r0 + bm), pack);
              const tile_spans vis = cuda::kv_tiles_for_queries(p, q.lo, q.hi, true);
              const tile_spans bnd = cuda::kv_tiles_for_queries(p, q.lo, q.hi, false);
              for (std::int64_t kt = 0; kt < num_kv_tiles(p); ++kt) {
                const std::int64_t k0 = kt * bc, k1 = std::min(p.Nkv, k0 + bc);
                bool all = true, any = false;
                for (std::int64_t i = q.lo; i < q.hi; ++i)
                  for (std::int64_t j = k0; j < k1; ++j) {
                    all = all && is_visible(p, i, j);
                    any = any || is_visible(p, i, j);
                  }
                if (cuda::tile_fully_visible(p, q, k0, k1))
                  ASSERT_TRUE(all) << m << " rows " << q.lo << ".." << q.hi << " tile " << kt;
                if (any) {
                  ASSERT_TRUE(vis.first.contains(kt) || vis.second.contains(kt)) << m << " tile " << kt;
                  ASSERT_TRUE(bnd.first.contains(kt)) << m << " tile " << kt;
                }
              }
            }
          }
      }
}

TEST(Flash2Host, KernelTileWalkMatchesHarnessByteModel) {
  for (const char* m : {"none", "causal", "local:50,0+global:9"})
    for (std::int64_t hkv : {4, 1}) {
      const problem p = f2_problem(2, 4, hkv, 300, 517, 128, dtype::fp16, m, 128, 64);
      EXPECT_DOUBLE_EQ(cuda::model_bytes_flash2_cuda(p), model_bytes_flash2(p)) << m;
    }
}

// A row tile that visits no key tile (causal, Nq > Nkv: the first rows see
// no key) skips its Q read in the kernel; the rows report the walk's bytes,
// harness model_bytes_flash2 / model_bytes_sparse still count that Q.
TEST(Flash2Host, RowTilesWithoutKeyTilesSkipQ) {
  const problem p = f2_problem(1, 2, 2, 400, 20, 64, dtype::fp16, "causal", 128, 64);
  double skipped = 0;
  for (std::int64_t r0 = 0; r0 < p.Nq; r0 += p.Br) {
    const std::int64_t r1 = std::min(p.Nq, r0 + p.Br);
    if (cuda::kv_tiles_for_queries(p, r0, r1, false).count() == 0) skipped += (r1 - r0) * p.d * 2.0;
  }
  skipped *= static_cast<double>(p.B * p.H);
  EXPECT_GT(skipped, 0);
  EXPECT_DOUBLE_EQ(cuda::model_bytes_flash2_cuda(p), model_bytes_flash2(p) - skipped);
  const variant* f = find_variant("flash2", backend_kind::cuda);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->bytes(p), cuda::model_bytes_flash2_cuda(p));

  const problem ps = f2_problem(1, 2, 2, 400, 20, 64, dtype::fp16, "causal+global:4", 128, 64);
  const variant* s = find_variant("sparse", backend_kind::cuda);
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(s->bytes(ps), cuda::model_bytes_sparse_cuda(ps));
  EXPECT_DOUBLE_EQ(s->flops_executed(ps), cuda::model_flops_executed_sparse_cuda(ps));
  EXPECT_LE(s->bytes(ps), model_bytes_sparse(ps));
}

TEST(Flash2Host, SupportsReasons) {
  const variant* v = find_variant("flash2", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  problem p = f2_problem(1, 2, 2, 128, 128, 128, dtype::fp32, "none");
  EXPECT_EQ(v->supports(p).reason, "tensor-core kernel needs fp16 or bf16");
  p.type = dtype::bf16;
  p.d = 96;
  EXPECT_NE(v->supports(p).reason.find("d=96"), std::string::npos);
  p.d = 64;
  p.Br = 64;
  p.Bc = 128;
  EXPECT_NE(v->supports(p).reason.find("64x128"), std::string::npos) << v->supports(p).reason;
  EXPECT_TRUE(v->writes_lse);
  p.Br = 128;
  EXPECT_TRUE(v->supports(p).ok) << v->supports(p).reason;
}

TEST(Flash2Host, ExecutedFlopsCoverUsefulFlops) {
  const variant* v = find_variant("flash2", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  for (const char* m : {"none", "causal", "local:64,0"}) {
    const problem p = f2_problem(1, 2, 2, 1000, 1000, 64, dtype::bf16, m);
    EXPECT_GE(v->flops_executed(p), v->flops(p)) << m;
    EXPECT_GT(v->bytes(p), 0) << m;
    EXPECT_GE(static_cast<double>(v->memory_bytes(p)), model_bytes_min(p)) << m;
  }
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

INSTANTIATE_TEST_SUITE_P(
    AllInstantiations, Flash2Tiles,
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
