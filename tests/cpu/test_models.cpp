// FLOP and byte models against counts done by hand (the arithmetic is in the
// comments; docs/models.md has the general formulas).
#include <gtest/gtest.h>

#include "kernels/cuda/flash2/flash2_params.hpp"
#include "kernels/models/models.hpp"

using namespace attnbench;

namespace {

problem make(std::int64_t B, std::int64_t H, std::int64_t Hkv, std::int64_t Nq, std::int64_t Nkv, std::int64_t d,
             const char* mask, std::int64_t Br = 16, std::int64_t Bc = 16) {
  return make_problem(B, H, Hkv, Nq, Nkv, d, dtype::fp32, mask, Br, Bc);
}

TEST(models, flops_softmax_by_hand) {
  // Causal 4x4: 1 + 2 + 3 + 4 = 10 pairs, 4 * 8 * 10.
  EXPECT_EQ(model_flops_softmax(make(1, 1, 1, 4, 4, 8, "causal")), 320);
  // Causal Nq = 2, Nkv = 5: i' = i + 3, rows see 4 and 5 keys = 9 pairs; B*H = 6.
  EXPECT_EQ(model_flops_softmax(make(2, 3, 1, 2, 5, 8, "causal")), 4 * 8 * 9 * 6);
  // local:1,1 on 5x5: 2 + 3 + 3 + 3 + 2 = 13 pairs.
  EXPECT_EQ(model_flops_softmax(make(1, 1, 1, 5, 5, 8, "local:1,1")), 4 * 8 * 13);
  // local:0,0 + global:1 on 4x4: row 0 sees all 4, rows 1..3 see key 0 and key i.
  EXPECT_EQ(model_flops_softmax(make(1, 1, 1, 4, 4, 8, "local:0,0+global:1")), 4 * 8 * 10);
  // No mask: every pair.
  EXPECT_EQ(model_flops_softmax(make(2, 4, 2, 7, 9, 16, "none")), 4.0 * 16 * 7 * 9 * 8);
}

TEST(models, flops_linear_by_hand) {
  // 2d(d+1) = 144 at d = 8. Non-causal: 5 keys x 1 KV head + 3 rows x 2 heads.
  EXPECT_EQ(model_flops_linear(make(1, 2, 1, 3, 5, 8, "none")), 144 * (5 + 6));
  // Causal Nq = 5, Nkv = 3: i' = i - 2, rows 2..4 see a key.
  EXPECT_EQ(model_flops_linear(make(1, 1, 1, 5, 3, 8, "causal")), 144 * (3 + 3));
  // Executed, causal Nq = 10, Nkv = 40, Bc = 16: state pass over 32 keys
  // (4608), 10 rows read the state (1440), blocks 2x16 + 8x8 = 96 pairs x 34.
  EXPECT_EQ(model_flops_executed_linear(make(1, 1, 1, 10, 40, 8, "causal")), 4608 + 1440 + 3264);
  EXPECT_EQ(model_flops_executed_linear(make(1, 2, 1, 3, 5, 8, "none")),
            model_flops_linear(make(1, 2, 1, 3, 5, 8, "none")));
}

TEST(models, flops_executed_by_hand) {
  // Causal 40x40, 16x16 tiles: tiles rows 16, 16, 8 visit 16, 32, 40 keys.
  const problem c = make(1, 1, 1, 40, 40, 8, "causal");
  EXPECT_EQ(model_flops_executed_flash2(c), 4 * 8 * (256 + 512 + 320));
  EXPECT_EQ(model_flops_executed_flash1(c), model_flops_executed_flash2(c));
  EXPECT_EQ(model_flops_executed_naive(c), 4 * 8 * 1600);
  // local:3,0: the last tile (rows 32..39, keys 29..39) skips key tile 0.
  const problem w = make(1, 1, 1, 40, 40, 8, "local:3,0");
  EXPECT_EQ(model_flops_executed_sparse(w), 4 * 8 * (256 + 512 + 8 * 24));
  EXPECT_EQ(model_flops_executed_flash2(w), 4 * 8 * 1600);  // no causal bound: every tile
}

TEST(models, bytes_min_by_hand) {
  // Q and O: 2 heads x 3 rows x 8; K and V: 1 head x 5 keys x 8 -> 176 floats.
  EXPECT_EQ(model_bytes_min(make(1, 2, 1, 3, 5, 8, "none")), 176 * 4);
  problem h = make(1, 2, 1, 3, 5, 8, "none");
  h.type = dtype::bf16;
  EXPECT_EQ(model_bytes_min(h), 176 * 2);
}

TEST(models, bytes_naive_by_hand) {
  // 40x40, d = 8, Br = 16 (3 query tiles): Q 1280 + K 3 x 1280 + S write,
  // S read, P write, P read 4 x 6400 + V 3 x 1280 + O 1280.
  EXPECT_EQ(model_bytes_naive(make(1, 1, 1, 40, 40, 8, "causal")), 35840);
  // Expand H = 2 from Hkv = 1, 16x16: K, V read + written per query head
  // 4 x 4 x 2 x 16 x 8 = 4096, then naive on two heads 2 x 6144.
  EXPECT_EQ(model_bytes_naive_gqa_expand(make(1, 2, 1, 16, 16, 8, "none")), 4096 + 12288);
}

TEST(models, bytes_flash_by_hand) {
  const problem c = make(1, 1, 1, 40, 40, 8, "causal");
  // flash2: per query tile rows x (Q + O = 64 bytes + lse 4) + 64 bytes per key.
  // 16 x 68 + 64 x 16 = 2112; 16 x 68 + 64 x 32 = 3136; 8 x 68 + 64 x 40 = 3104.
  EXPECT_EQ(model_bytes_flash2(c), 2112 + 3136 + 3104);
  // flash1: init O, l, m = 40 x (32 + 8) = 1600; 6 visited blocks, each K/V
  // 64 bytes per key and 112 bytes per row (Q, O read, O write 96; l, m r/w 16):
  // (1024 + 1792) + 2 x (1024 + 1792) + (64 x 40 + 3 x 112 x 8).
  EXPECT_EQ(model_bytes_flash1(c), 1600 + 2816 + 5632 + 5248);
  // sparse, local:3,0: the last tile reads keys 16..39 only.
  EXPECT_EQ(model_bytes_sparse(make(1, 1, 1, 40, 40, 8, "local:3,0")), 2112 + 3136 + 544 + 1536);
}

TEST(models, bytes_linear_by_hand) {
  // State: (64 + 8) x 4 = 288 bytes. Non-causal, Nq = 20, Nkv = 10, H = 2, Hkv = 1:
  // state pass 2 x 10 x 8 x 4 + 288 = 928; output pass per head 2 tiles x 288 + Q and O 1280.
  EXPECT_EQ(model_bytes_linear(make(1, 2, 1, 20, 10, 8, "none")), 928 + 2 * (576 + 1280));
  // Causal Nq = 10, Nkv = 40, Bc = 16: i' = i + 30, chunks 1 (rows 0..1) and 2 (rows 2..9).
  const problem c = make(1, 1, 1, 10, 40, 8, "causal");
  EXPECT_EQ(linear_first_chunk(c), 1);
  EXPECT_EQ(linear_chunk_rows(c, 1).lo, 0);
  EXPECT_EQ(linear_chunk_rows(c, 1).hi, 2);
  EXPECT_EQ(linear_chunk_rows(c, 2).lo, 2);
  EXPECT_EQ(linear_chunk_rows(c, 2).hi, 10);
  // State pass: K, V of chunks 0..1 (2048) + 2 states (576); chunk 1: state,
  // 2 rows of Q and O, 16 keys of K and V (288 + 128 + 1024); chunk 2: 288 + 512 + 512.
  EXPECT_EQ(model_bytes_linear(c), 2624 + 1440 + 1312);
  // Nq > Nkv: rows with i' < 0 are written as zeros (3 rows x 32 bytes).
  const problem z = make(1, 1, 1, 5, 2, 8, "causal");
  EXPECT_EQ(model_bytes_linear(z), /*state*/ 288 + /*zeros*/ 96 + /*chunk 0*/ 288 + 2 * 64 + 2 * 64);
}

// e4m3: Q, K, V at 1 byte, O at output_bytes = 2 (bf16), S/P/lse/l/m
// and states at 4, in every model. Causal 40 x 40, d = 8, 16 x 16 tiles, B = H = 1:
// |Q| = |K| = |V| = |O| = 320 elements, 1600 scores.
TEST(models, e4m3_bytes_by_hand) {
  problem c = make(1, 1, 1, 40, 40, 8, "causal");
  c.type = dtype::e4m3;
  ASSERT_EQ(dtype_bytes(c.type), 1);
  ASSERT_EQ(output_bytes(c.type), 2);
  EXPECT_EQ(model_bytes_min(c), 3 * 320 + 2 * 320);
  // flash2: per query tile rows x (Q 8 + O 16 + lse 4) + 16 bytes per key (K, V):
  // 16 x 28 + 16 x 16 = 704; 16 x 28 + 16 x 32 = 960; 8 x 28 + 16 x 40 = 864.
  EXPECT_EQ(model_bytes_flash2(c), 704 + 960 + 864);
  // The CUDA walk (flash2 rows, and flash3_fp8 through model_flash3_cuda) counts
  // the same when every query tile visits a key tile.
  cuda::flash2_plan plan;
  plan.geometry = c;
  EXPECT_EQ(model_flash2_cuda(c, plan).bytes, 704 + 960 + 864);
  EXPECT_EQ(model_flash3_cuda(c, c, 1, tile_walk::causal_bound).bytes, 704 + 960 + 864);
  // sparse, local:3,0: the last tile reads keys 16..39 only: 8 x 28 + 16 x 24.
  problem w = make(1, 1, 1, 40, 40, 8, "local:3,0");
  w.type = dtype::e4m3;
  EXPECT_EQ(model_bytes_sparse(w), 704 + 960 + 224 + 384);
  // naive: Q 320 + K, V 3 x 320 each + O 640 + S/P 4 x 6400.
  EXPECT_EQ(model_bytes_naive(c), 320 + 1920 + 640 + 25600);
  // flash1: init O, l, m 40 x (16 + 8) = 960; per block 16 bytes per key and per row
  // Q 8 + O read and written 32 + l, m 16 = 56: (256 + 896) + (512 + 1792) + (640 + 1344).
  EXPECT_EQ(model_bytes_flash1(c), 960 + 1152 + 2304 + 1984);
  // flash1 (cuda): per tile Q + K/V + state round trips + O (2 bytes) + lse:
  // 128 + 256 + 0 + 256 + 64; 128 + 512 + 1280 + 256 + 64; 64 + 640 + 1280 + 128 + 32.
  EXPECT_EQ(model_bytes_flash1_cuda(c), 704 + 2240 + 2144);
  // cublas_unfused: Q, K 640 + S 6400; S read twice 12800 + P 1600 + lse 160; P 1600 + V 320 + O 640.
  EXPECT_EQ(model_bytes_cublas_unfused(c), 7040 + 14560 + 2560);
  // naive (cuda), t = 32: Q 640 + K 640 + S 6400; 12800 + 6400 + 160; P 6400 + V 640 + O 640.
  EXPECT_EQ(model_bytes_naive_cuda(c), 7680 + 19360 + 7680);
  // linear, non-causal, Nq = 20, Nkv = 10, H = 2, Hkv = 1: state pass K, V 160 + 288;
  // per head 2 state reads 576 + Q 160 + O 320.
  problem l = make(1, 2, 1, 20, 10, 8, "none");
  l.type = dtype::e4m3;
  EXPECT_EQ(model_bytes_linear(l), 448 + 2 * (576 + 480));
}

TEST(models, flash1_traffic_grows_with_key_tiles) {
  problem p = make(1, 8, 8, 2048, 2048, 64, "none", 64, 64);
  const double b64 = model_bytes_flash1(p);
  p.Bc = 128;
  EXPECT_LT(model_bytes_flash1(p), b64);
  EXPECT_GT(b64, model_bytes_flash2(make(1, 8, 8, 2048, 2048, 64, "none", 64, 64)));
}

TEST(models, tile_geometry_counts_real_rows) {
  const problem p = make(1, 1, 1, 40, 37, 8, "none");
  EXPECT_EQ(q_tile_rows(p, 2), 8);
  EXPECT_EQ(kv_tile_cols(p, 2), 5);
  EXPECT_EQ(keys_in_tiles(p, {1, 3}), 21);
  EXPECT_EQ(keys_in_tiles(p, {2, 2}), 0);
}

}  // namespace
