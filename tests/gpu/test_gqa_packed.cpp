// flash2_gqa_packed (cuda): all query heads of a KV group in one CTA's rows.
// Every GQA ratio including MQA and a ratio (3) that does not divide the row
// tile, short and long query lengths, causal/local/global masks, fully
// masked rows. Host-only: supports reason, and the byte model shows the K/V
// saving over flash2 when a group's rows fit in fewer row tiles.
#include <gtest/gtest.h>

#include "kernels/models/models.hpp"
#include "tests/gpu/flash2_test_support.hpp"

namespace attnbench::testing {
namespace {

TEST(GqaPackedHost, SupportsOnlyGroupedHeads) {
  const variant* v = find_variant("flash2_gqa_packed", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->supports(f2_problem(1, 4, 4, 256, 256, 128, dtype::bf16, "causal")).reason,
            "flash2_gqa_packed (cuda) exists for GQA and needs Hkv < H (got H == Hkv = 4)");
  EXPECT_TRUE(v->supports(f2_problem(1, 4, 1, 256, 256, 128, dtype::bf16, "causal")).ok);
}

TEST(GqaPackedHost, LoadsKvOncePerGroupForShortQueries) {
  const variant* v = find_variant("flash2_gqa_packed", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  // Nq = 16, G = 8: 128 packed rows = one row tile, versus 8 row tiles (one
  // per head) in flash2, so K/V bytes drop 8x.
  const problem p = f2_problem(1, 32, 4, 16, 8192, 128, dtype::bf16, "none");
  const double kv = 2.0 * p.B * p.Hkv * p.Nkv * p.d * 2;
  const double qo = 2.0 * p.B * p.H * p.Nq * p.d * 2 + 4.0 * p.rows();
  EXPECT_DOUBLE_EQ(v->model(p).bytes, kv + qo);
  EXPECT_NEAR(model_bytes_flash2(p) - qo, 8 * kv, 1.0);
  EXPECT_DOUBLE_EQ(v->model(p).flops, model_flops_softmax(p));
}

TEST(GqaPacked, EveryRatio) {
  ATTN_REQUIRE_GPU();
  for (std::int64_t hkv : {4, 2, 1})
    for (dtype t : {dtype::bf16, dtype::fp16})
      expect_row_accurate("flash2_gqa_packed", f2_problem(2, 8, hkv, 150, 300, 128, t, "causal"));
  // G = 3 does not divide 64 or 128: a row tile starts mid-query.
  expect_row_accurate("flash2_gqa_packed", f2_problem(1, 6, 2, 100, 200, 64, dtype::bf16, "none", 64, 64));
  expect_row_accurate("flash2_gqa_packed", f2_problem(1, 6, 2, 100, 200, 64, dtype::bf16, "causal", 128, 128));
}

TEST(GqaPacked, ShortQueriesAndMasks) {
  ATTN_REQUIRE_GPU();
  for (const char* m : {"none", "causal", "local:64,0", "local:20,20+global:4"}) {
    expect_row_accurate("flash2_gqa_packed", f2_problem(1, 16, 2, 5, 700, 128, dtype::bf16, m));
    expect_row_accurate("flash2_gqa_packed", f2_problem(1, 8, 1, 1, 333, 64, dtype::fp16, m, 64, 64));
  }
}

TEST(GqaPacked, FullyMaskedRows) {
  ATTN_REQUIRE_GPU();
  const problem p = f2_problem(1, 8, 2, 200, 50, 128, dtype::bf16, "causal");
  ASSERT_GT(fully_masked_rows(p), 0);
  expect_row_accurate("flash2_gqa_packed", p);
}

TEST(GqaPacked, EveryTile) {
  ATTN_REQUIRE_GPU();
  for (auto [br, bc] : {std::pair{64, 64}, {128, 64}, {128, 128}})
    for (std::int64_t d : {64, 128})
      expect_row_accurate("flash2_gqa_packed", f2_problem(1, 8, 2, 90, 300, d, dtype::bf16, "causal", br, bc));
}

}  // namespace
}  // namespace attnbench::testing
