// flash2_splitkv (cuda): decode, Nq 1..16 against long key ranges, KV split
// over CTAs and merged. Every GQA ratio incl. MQA, masks that leave splits
// empty (forced split counts larger than the visited tiles, causal/local
// windows, global rows that see every key next to rows that see few), fully
// masked rows, d 64/128, fp16/bf16, a 128k-key case. Host-only: supports
// reason, split choice, models.
#include <gtest/gtest.h>

#include "kernels/models/models.hpp"
#include "kernels/cuda/flash2/flash2_params.hpp"
#include "tests/gpu/flash2_test_support.hpp"

namespace attnbench::testing {
namespace {

TEST(SplitKvHost, SupportsDecodeOnly) {
  const variant* v = find_variant("flash2_splitkv", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->supports(f2_problem(1, 8, 8, 17, 4096, 128, dtype::bf16, "none")).reason,
            "flash2_splitkv (cuda) handles Nq <= 16, got Nq=17");
  EXPECT_TRUE(v->supports(f2_problem(1, 8, 1, 16, 4096, 128, dtype::bf16, "causal")).ok);
  EXPECT_EQ(v->supports(f2_problem(1, 8, 1, 1, 4096, 128, dtype::fp32, "none")).reason,
            "flash2_splitkv (cuda) computes in bf16, fp16, not fp32");
}

TEST(SplitKvHost, SplitsFollowSmCountAndLength) {
  const problem p = f2_problem(1, 32, 8, 1, 131072, 128, dtype::bf16, "none");
  const int s132 = cuda::splitkv_num_splits(p, 132);
  EXPECT_GT(s132, 1);
  EXPECT_LE(s132, cuda::kMaxSplits);
  EXPECT_GE(cuda::splitkv_num_splits(p, 264), s132);
  // A short key range keeps at least 4 tiles per split.
  const problem q = f2_problem(1, 32, 8, 1, 512, 128, dtype::bf16, "none");
  EXPECT_LE(cuda::splitkv_num_splits(q, 132), 2);
}

TEST(SplitKvHost, ModelCountsKvOncePlusPartials) {
  const variant* v = find_variant("flash2_splitkv", backend_kind::cuda);
  ASSERT_NE(v, nullptr);
  const problem p = f2_problem(1, 32, 8, 1, 131072, 128, dtype::bf16, "none");
  const double kv = 2.0 * p.B * p.Hkv * p.Nkv * p.d * 2;
  EXPECT_GT(v->model(p).bytes, kv);
  EXPECT_LT(v->model(p).bytes, 1.05 * kv);  // Q and split partials are small at this size
  EXPECT_GT(v->memory_bytes(p), static_cast<std::int64_t>(model_bytes_min(p)));
  EXPECT_GE(v->model(p).flops_executed, v->model(p).flops);
}

void expect_forced_splits(const problem& p, int splits) {
  auto r = cuda::make_flash2_runner(p, true, cuda::flash2_row::splitkv, splits);
  const f2_checked_run c = run_runner_and_check(*r, p, 512);
  expect_accurate(c, p, error_bound(p, 512), "splits " + std::to_string(splits));
}

TEST(SplitKv, DecodeShapesEveryRatio) {
  ATTN_REQUIRE_GPU();
  for (std::int64_t nq : {1, 4, 16})
    for (std::int64_t hkv : {8, 2, 1})
      expect_row_accurate("flash2_splitkv", f2_problem(2, 8, hkv, nq, 5000, 128, dtype::bf16, "none"));
  for (dtype t : {dtype::fp16, dtype::bf16})
    expect_row_accurate("flash2_splitkv", f2_problem(1, 8, 4, 3, 3333, 64, t, "causal"));
}

// G = 32 query heads per KV head: 2 queries x 32 heads = 64 packed rows,
// four 16-row tiles per KV head (G > the decode tile's 16 rows).
TEST(SplitKv, GroupLargerThanDecodeTile) {
  ATTN_REQUIRE_GPU();
  expect_row_accurate("flash2_splitkv", f2_problem(1, 32, 1, 2, 3000, 128, dtype::bf16, "causal"));
}

TEST(SplitKv, EmptySplitsDoNotProduceNaN) {
  ATTN_REQUIRE_GPU();
  // 5 key tiles shared by 16 splits: 11 splits visit nothing.
  expect_forced_splits(f2_problem(1, 4, 2, 4, 300, 128, dtype::bf16, "none"), 16);
  // Local window of 40 keys at the end of 4000: one or two visited tiles.
  expect_forced_splits(f2_problem(1, 4, 1, 8, 4000, 64, dtype::fp16, "local:40,0"), 32);
  // Global rows (queries 0, 1) see all 63 tiles, the others a 10-key window.
  expect_forced_splits(f2_problem(1, 4, 1, 16, 4000, 128, dtype::bf16, "local:10,0+global:2"), 24);
  // Causal with Nq > Nkv: fully masked rows in every split.
  expect_forced_splits(f2_problem(1, 2, 2, 16, 10, 64, dtype::bf16, "causal"), 4);
  for (int s : {1, 2, 7, 64}) expect_forced_splits(f2_problem(1, 8, 2, 2, 2000, 128, dtype::bf16, "causal"), s);
}

TEST(SplitKv, MasksAndFullyMaskedRows) {
  ATTN_REQUIRE_GPU();
  for (const char* m : {"causal", "local:300,0", "local:5,5+global:3", "global:8"})
    expect_row_accurate("flash2_splitkv", f2_problem(1, 8, 2, 16, 7000, 128, dtype::bf16, m));
  const problem p = f2_problem(1, 4, 4, 16, 8, 64, dtype::fp16, "causal");
  ASSERT_GT(fully_masked_rows(p), 0);
  expect_row_accurate("flash2_splitkv", p);
}

TEST(SplitKv, LongContext128k) {
  ATTN_REQUIRE_GPU();
  expect_row_accurate("flash2_splitkv", f2_problem(1, 8, 1, 1, 131072, 128, dtype::bf16, "none"));
  expect_row_accurate("flash2_splitkv", f2_problem(1, 4, 4, 4, 131072, 64, dtype::fp16, "causal"), 16);
}

}  // namespace
}  // namespace attnbench::testing
