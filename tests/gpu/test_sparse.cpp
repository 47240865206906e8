// sparse (cuda): the flash2 kernel visiting only visible_kv_tiles — local
// windows, global tokens, both; Nq != Nkv, ragged lengths, fully masked rows
// (window entirely before the first key), d 64/128, fp16/bf16, every tile.
// Host-only: supports reasons and the executed-FLOP saving over flash2.
#include <gtest/gtest.h>

#include "kernels/models/models.hpp"
#include "tests/gpu/flash2_test_support.hpp"

namespace attnbench::testing {
namespace {

TEST(SparseHost, SupportsOnlyLocalOrGlobalMasks) {
  const variant* v = find_variant("sparse", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->supports(f2_problem(1, 1, 1, 256, 256, 64, dtype::bf16, "causal")).reason,
            "mask causal has no local/global sparsity; flash2 covers it");
  EXPECT_EQ(v->supports(f2_problem(1, 1, 1, 256, 256, 64, dtype::bf16, "none")).reason,
            "mask none has no local/global sparsity; flash2 covers it");
  EXPECT_TRUE(v->supports(f2_problem(1, 1, 1, 256, 256, 64, dtype::bf16, "local:64,0")).ok);
  EXPECT_TRUE(v->supports(f2_problem(1, 1, 1, 256, 256, 64, dtype::bf16, "causal+global:4")).ok);
  EXPECT_FALSE(v->supports(f2_problem(1, 1, 1, 256, 256, 64, dtype::fp32, "local:64,0")).ok);
}

TEST(SparseHost, VisitsFewerTilesThanFlash2) {
  const variant* s = find_variant("sparse", backend_kind::cuda);
  const variant* f = find_variant("flash2", backend_kind::cuda);
  ASSERT_NE(s, nullptr);
  ASSERT_NE(f, nullptr);
  const problem p = f2_problem(1, 4, 4, 4096, 4096, 128, dtype::bf16, "local:256,0+global:64");
  EXPECT_LT(s->model(p).flops_executed, 0.25 * f->model(p).flops_executed);
  EXPECT_LT(s->model(p).bytes, 0.25 * f->model(p).bytes);
  EXPECT_GE(s->model(p).flops_executed, s->model(p).flops);
  EXPECT_DOUBLE_EQ(s->model(p).flops, model_flops_softmax(p));
}

TEST(Sparse, LocalWindows) {
  ATTN_REQUIRE_GPU();
  for (const char* m : {"local:0,0", "local:63,0", "local:17,33", "local:200,200"})
    for (dtype t : {dtype::bf16, dtype::fp16}) expect_row_accurate("sparse", f2_problem(1, 2, 2, 500, 500, 128, t, m));
}

TEST(Sparse, GlobalTokens) {
  ATTN_REQUIRE_GPU();
  for (const char* m : {"global:1", "global:70", "local:16,0+global:5", "causal+global:130"})
    expect_row_accurate("sparse", f2_problem(1, 2, 2, 400, 600, 64, dtype::bf16, m, 64, 64));
}

TEST(Sparse, QueriesAndKeysDiffer) {
  ATTN_REQUIRE_GPU();
  expect_row_accurate("sparse", f2_problem(1, 2, 1, 123, 1000, 128, dtype::bf16, "local:100,0"));
  expect_row_accurate("sparse", f2_problem(1, 2, 1, 1000, 123, 64, dtype::fp16, "local:50,50+global:2", 64, 64));
}

TEST(Sparse, FullyMaskedRows) {
  ATTN_REQUIRE_GPU();
  // Nq > Nkv with a causal-like window: the first Nq - Nkv rows see no key.
  const problem p = f2_problem(1, 2, 2, 500, 100, 64, dtype::bf16, "local:10,0", 64, 64);
  ASSERT_GT(fully_masked_rows(p), 0);
  expect_row_accurate("sparse", p);
}

TEST(Sparse, EveryTileAndGqaRatio) {
  ATTN_REQUIRE_GPU();
  for (auto [br, bc] : {std::pair{64, 64}, {128, 64}, {128, 128}})
    for (std::int64_t d : {64, 128})
      expect_row_accurate("sparse", f2_problem(1, 4, 2, 300, 300, d, dtype::bf16, "local:70,10+global:3", br, bc));
  expect_row_accurate("sparse", f2_problem(1, 4, 2, 300, 300, 128, dtype::fp16, "local:70,10+global:3", 128, 32));
  for (std::int64_t hkv : {4, 1})
    expect_row_accurate("sparse", f2_problem(2, 4, hkv, 257, 257, 64, dtype::fp16, "local:40,0", 64, 64));
}

}  // namespace
}  // namespace attnbench::testing
